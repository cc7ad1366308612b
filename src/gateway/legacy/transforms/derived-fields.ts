/**
 * The part of the legacy records that must be computed, registered by the names
 * `mappings/records.ts` uses: derived fields (over a whole v3 record, by v3 record kind) and
 * converters (of one v3 value). Everything else about a legacy field is declared as data.
 * Pure functions over records readV3 has checked (ids are legacy UUIDs, amounts decimal text).
 *
 * Which side of a trade or quote is which: the referenced side is the one its amount was given
 * in (`referencedCurrency` of a trade, `amountCurrency` of a quote); the other side is computed.
 */
import { nameBasedUuid } from '../../../lib/ids.js';
import type { V3RecordKind, V3RecordOf } from '../v3-contract/v3-records.js';

interface Sides {
  readonly buyCurrency: string;
  readonly sellCurrency: string;
  readonly buyAmount: string;
  readonly sellAmount: string;
}

/** readV3 has checked that the referenced currency is one of the two sides. */
function sides(record: Sides, referencedCurrency: string) {
  const referencedIsBuy = referencedCurrency === record.buyCurrency;
  return {
    referencedIsBuy,
    otherCurrency: referencedIsBuy ? record.sellCurrency : record.buyCurrency,
    referencedAmount: referencedIsBuy ? record.buyAmount : record.sellAmount,
    otherAmount: referencedIsBuy ? record.sellAmount : record.buyAmount,
  };
}

type DerivedOf<K extends V3RecordKind> = Readonly<Record<string, (record: V3RecordOf<K>) => unknown>>;
type DerivedTable = { readonly [K in V3RecordKind]?: DerivedOf<K> };

/** A fiat deposit or withdrawal has no chain; legacy records name its rail FIAT. */
const networkOrFiat = (record: { readonly assetType: string; readonly network: string | null }) =>
  record.assetType === 'FIAT' ? 'FIAT' : record.network;

/** The reference each rail gives a payment it made; what a bank statement shows the receiver. */
const RAIL_REFERENCES: Readonly<Record<string, string>> = { FEDWIRE: 'imad', SWIFT: 'uetr' };

/** A paid fiat withdrawal's rail reference (FEDWIRE IMAD, SWIFT UETR); null before payment and for stablecoins. */
function railReference(withdrawal: { readonly paymentDetails: Readonly<Record<string, unknown>> }): string | null {
  for (const [rail, field] of Object.entries(RAIL_REFERENCES)) {
    const details = withdrawal.paymentDetails[rail];
    const reference =
      typeof details === 'object' && details !== null ? (details as Record<string, unknown>)[field] : undefined;
    if (typeof reference === 'string') return reference;
  }
  return null;
}

export const DERIVED_FIELDS = {
  trade: {
    tradingPair: (trade) => `${trade.referencedCurrency}/${sides(trade, trade.referencedCurrency).otherCurrency}`,
    tradeDirection: (trade) => (sides(trade, trade.referencedCurrency).referencedIsBuy ? 'BUY' : 'SELL'),
    counterAmount: (trade) => sides(trade, trade.referencedCurrency).otherAmount,
  },
  quote: {
    referencedAmount: (quote) => sides(quote, quote.amountCurrency).referencedAmount,
    counterAmount: (quote) => sides(quote, quote.amountCurrency).otherAmount,
    // v3 validities are whole seconds; rounding only absorbs a clock's sub-second jitter.
    validitySeconds: (quote) => Math.round((Date.parse(quote.expiresAt) - Date.parse(quote.createdAt)) / 1000),
  },
  withdrawalAccount: {
    // An active account that is not verified yet cannot be used: it still awaits verification.
    verificationStatus: (account) =>
      account.status === 'ACTIVE' && !account.verified ? 'PENDING_VERIFICATION' : account.status,
  },
  deposit: { networkOrFiat },
  withdrawal: { networkOrFiat, railReference },
} as const satisfies DerivedTable;

/** The namespace of the legacy coin and network UUIDs; fixed forever, so the UUIDs never change. */
const LEGACY_VOCABULARY_NAMESPACE = '5a3c2f0e-8d1b-4c6a-9e7f-0b2d4f6a8c1e';

export const CONVERTERS: Readonly<Record<string, (value: unknown) => unknown>> = {
  coinUuid: (code) => (typeof code === 'string' ? nameBasedUuid(LEGACY_VOCABULARY_NAMESPACE, `coin:${code}`) : null),
  networkUuid: (code) =>
    typeof code === 'string' ? nameBasedUuid(LEGACY_VOCABULARY_NAMESPACE, `network:${code}`) : null,
};

/** A derived field's function, for the record builder (the validator has checked that it exists). */
export function derivedField(kind: V3RecordKind, name: string): (record: unknown) => unknown {
  const table: Readonly<Record<string, (record: never) => unknown>> | undefined = (DERIVED_FIELDS as DerivedTable)[
    kind
  ];
  const derive = table?.[name];
  if (derive === undefined) throw new Error(`no derived field ${name} for the v3 ${kind} record`);
  return derive as (record: unknown) => unknown;
}

/** Every registered name, for the declarations' validator. */
export function derivedFieldNames(): Partial<Record<V3RecordKind, string[]>> {
  return Object.fromEntries(Object.entries(DERIVED_FIELDS).map(([kind, fields]) => [kind, Object.keys(fields)]));
}
