import { sha256 } from '@noble/hashes/sha2.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { decodeBase58 } from '../../../src/core/money-movement/base58.js';
import {
  isValidAbaRoutingNumber,
  isValidBic,
  isValidIban,
  isValidStablecoinAddress,
  normaliseIban,
  STABLECOIN_NETWORKS,
  type StablecoinNetwork,
} from '../../../src/core/money-movement/checksums.js';

// Independent reference helpers, written with BigInt so the tests do not share the
// implementation's arithmetic (chunked mod-97, carry-based base58).
const B58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

function encodeBase58(bytes: Uint8Array): string {
  let n = 0n;
  for (const b of bytes) n = n * 256n + BigInt(b);
  let out = '';
  while (n > 0n) {
    out = B58.charAt(Number(n % 58n)) + out;
    n /= 58n;
  }
  let zeros = 0;
  while (zeros < bytes.length && bytes[zeros] === 0) zeros += 1;
  return '1'.repeat(zeros) + out;
}

function hexToBytes(hex: string): Uint8Array {
  return Uint8Array.from(hex.match(/../g) ?? [], (pair) => Number.parseInt(pair, 16));
}

function ibanMod97(rearranged: string): number {
  let digits = '';
  for (const ch of rearranged) digits += Number.parseInt(ch, 36).toString();
  return Number(BigInt(digits) % 97n);
}

/** A valid IBAN for the country and BBAN: check digits = 98 - (BBAN + country + "00") mod 97. */
function makeIban(country: string, bban: string): string {
  const check = 98 - ibanMod97(bban + country + '00');
  return country + String(check).padStart(2, '0') + bban;
}

function abaWithCheckDigit(eight: string): string {
  const weights = [3, 7, 1, 3, 7, 1, 3, 7];
  let sum = 0;
  for (let i = 0; i < 8; i += 1) sum += Number(eight.charAt(i)) * (weights[i] ?? 0);
  return eight + String((10 - (sum % 10)) % 10);
}

function replaceAt(s: string, i: number, ch: string): string {
  return s.slice(0, i) + ch + s.slice(i + 1);
}

const DIGITS = '0123456789';
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';

describe('decodeBase58', () => {
  // Source: Bitcoin Core's test vectors base58_encode_decode.json (hex bytes, base58 text).
  const vectors: readonly (readonly [string, string])[] = [
    ['', ''],
    ['61', '2g'],
    ['626262', 'a3gV'],
    ['636363', 'aPEr'],
    ['73696d706c792061206c6f6e6720737472696e67', '2cFupjhnEsSn59qHXstmK2ffpLv2'],
    ['00eb15231dfceb60925886b67d065299925915aeb172c06647', '1NS17iag9jJgTHD1VXjvLCEnZuQ3rJDE9L'],
    ['516b6fcd0f', 'ABnLTmg'],
    ['bf4f89001e670274dd', '3SEo3LWLoPntC'],
    ['572e4794', '3EFU7m'],
    ['ecac89cad93923c02321', 'EJDM8drfXA6uyA'],
    ['10c8511e', 'Rt5zm'],
    ['00000000000000000000', '1111111111'],
    [
      '000111d38e5fc9071ffcd20b4a763cc9ae4f252bb4e48fd66a835e252ada93ff480d6dd43dc62a641155a5',
      '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz',
    ],
    ['271F359E', 'zzzzy'],
    ['271F35A0', '211111'],
  ];

  it.each(vectors)('decodes the Bitcoin Core vector %s', (hex, text) => {
    expect(decodeBase58(text)).toEqual(hexToBytes(hex));
  });

  it('rejects characters outside the Bitcoin alphabet', () => {
    for (const bad of ['0', 'O', 'I', 'l', '+', '/', ' ', '2g ', 'é', '\u{1F600}'])
      expect(decodeBase58(bad)).toBeUndefined();
  });

  it('round-trips any bytes, keeping leading zero bytes as leading 1s', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        expect(decodeBase58(encodeBase58(bytes))).toEqual(bytes);
      }),
    );
  });
});

describe('isValidStablecoinAddress: EVM (EIP-55)', () => {
  // Source: EIP-55 (https://eips.ethereum.org/EIPS/eip-55), "Test Cases": all caps, all lower, normal.
  const checksummed = [
    '0x52908400098527886E0F7030069857D2E4169EE7',
    '0x8617E340B3D01FA5F11F306F4090FD50E238070D',
    '0xde709f2102306220921060314715629080e2fb77',
    '0x27b1fdb04752bbc536007a920d24acb045561c26',
    '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
    '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359',
    '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB',
    '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb',
  ];
  const evm: readonly StablecoinNetwork[] = ['ETHEREUM', 'POLYGON', 'BASE'];

  it.each(checksummed)('accepts the EIP-55 test address %s on every EVM network', (address) => {
    for (const network of evm) expect(isValidStablecoinAddress(network, address)).toBe(true);
  });

  it('rejects every EIP-55 test address with any one letter’s case flipped', () => {
    for (const address of checksummed) {
      for (let i = 2; i < address.length; i += 1) {
        const ch = address.charAt(i);
        if (!/[a-fA-F]/.test(ch)) continue;
        const flipped = ch === ch.toLowerCase() ? ch.toUpperCase() : ch.toLowerCase();
        expect(isValidStablecoinAddress('ETHEREUM', replaceAt(address, i, flipped)), `${address} at ${i}`).toBe(false);
      }
    }
  });

  it('rejects the un-checksummed all-lower and all-upper forms of mixed-case addresses (documented choice)', () => {
    const mixed = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
    expect(isValidStablecoinAddress('ETHEREUM', mixed.toLowerCase())).toBe(false);
    expect(isValidStablecoinAddress('ETHEREUM', '0x' + mixed.slice(2).toUpperCase())).toBe(false);
  });

  it('accepts an address with no hex letters, which carries no checksum', () => {
    expect(isValidStablecoinAddress('BASE', '0x1234567890123456789012345678901234567890')).toBe(true);
    expect(isValidStablecoinAddress('BASE', '0x0000000000000000000000000000000000000000')).toBe(true);
  });

  it('rejects wrong prefixes, lengths and characters', () => {
    const ok = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
    for (const bad of [
      '',
      '0x',
      ok.slice(2),
      '0X' + ok.slice(2),
      ok.slice(0, -1),
      ok + 'd',
      replaceAt(ok, 5, 'g'),
      ` ${ok}`,
      `${ok}\n`,
    ]) {
      expect(isValidStablecoinAddress('ETHEREUM', bad), JSON.stringify(bad)).toBe(false);
    }
  });
});

describe('isValidStablecoinAddress: TRON', () => {
  // Source: USDT (TRC-20) contract address, as published by Tether and on Tronscan.
  const usdt = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';

  it('accepts the USDT TRC-20 contract address', () => {
    expect(isValidStablecoinAddress('TRON', usdt)).toBe(true);
  });

  it('rejects every single-character change of it', () => {
    for (let i = 0; i < usdt.length; i += 1) {
      for (const ch of B58) {
        if (ch === usdt.charAt(i)) continue;
        expect(isValidStablecoinAddress('TRON', replaceAt(usdt, i, ch)), `${i}=${ch}`).toBe(false);
      }
    }
  });

  it('rejects a base58check address with another version byte', () => {
    // Source: the Bitcoin genesis block coinbase address (version 0x00, valid base58check).
    const genesis = '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa';
    const bytes = decodeBase58(genesis) ?? new Uint8Array();
    expect(bytes.length).toBe(25);
    // Its checksum is right; only the version byte (0x00, not 0x41) should make it fail.
    expect(sha256(sha256(bytes.subarray(0, 21))).subarray(0, 4)).toEqual(bytes.subarray(21));
    expect(isValidStablecoinAddress('TRON', genesis)).toBe(false);
  });

  it('accepts any well-formed 0x41 base58check payload and rejects a bad checksum', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 20, maxLength: 20 }), (body) => {
        const payload = Uint8Array.of(0x41, ...body);
        const checksum = sha256(sha256(payload)).subarray(0, 4);
        expect(isValidStablecoinAddress('TRON', encodeBase58(Uint8Array.of(...payload, ...checksum)))).toBe(true);
        const broken = Uint8Array.of(...checksum);
        broken[3] = (broken[3] ?? 0) ^ 1;
        expect(isValidStablecoinAddress('TRON', encodeBase58(Uint8Array.of(...payload, ...broken)))).toBe(false);
      }),
    );
  });

  it('is not confused with other networks', () => {
    expect(isValidStablecoinAddress('ETHEREUM', usdt)).toBe(false);
    expect(isValidStablecoinAddress('SOLANA', usdt)).toBe(false);
  });
});

describe('isValidStablecoinAddress: SOLANA', () => {
  // Source: Solana documentation: System Program and SPL Token Program ids; Circle: USDC mint on Solana.
  const valid = [
    '11111111111111111111111111111111',
    'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA',
    'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
  ];

  it.each(valid)('accepts %s', (address) => {
    expect(isValidStablecoinAddress('SOLANA', address)).toBe(true);
  });

  it('rejects base58 that decodes to 31 or 33 bytes, even at a plausible length', () => {
    const short = encodeBase58(new Uint8Array(31).fill(0xff));
    const long = encodeBase58(Uint8Array.of(1, ...new Uint8Array(32).fill(0xff)));
    for (const s of [short, long]) {
      expect(s.length).toBeGreaterThanOrEqual(32);
      expect(s.length).toBeLessThanOrEqual(44);
      expect(isValidStablecoinAddress('SOLANA', s)).toBe(false);
    }
    expect(isValidStablecoinAddress('SOLANA', '1111111111111111111111111111111')).toBe(false);
  });

  it('rejects characters outside the alphabet', () => {
    for (const bad of [
      'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5D0',
      'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DI',
      'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5D ',
    ]) {
      expect(isValidStablecoinAddress('SOLANA', bad)).toBe(false);
    }
  });

  it('accepts any 32 bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), (bytes) => {
        expect(isValidStablecoinAddress('SOLANA', encodeBase58(bytes))).toBe(true);
      }),
    );
  });
});

describe('isValidAbaRoutingNumber', () => {
  // Sources: 011000015 is the Federal Reserve Bank of Boston (Federal Reserve E-Payments Routing
  // Directory); 021000021 is JPMorgan Chase's published routing number; 026009593 is Bank of
  // America's published domestic wire routing number.
  it.each(['011000015', '021000021', '026009593'])('accepts %s', (aba) => {
    expect(isValidAbaRoutingNumber(aba)).toBe(true);
  });

  it('rejects each published number with one digit changed, and malformed input', () => {
    for (const bad of [
      '011000016',
      '021000022',
      '026009594',
      '121000021',
      '026009393',
      '000000000',
      '02100002',
      '0210000211',
      '02100002a',
      ' 021000021',
      '021-000-021',
      '０２１００００２１',
    ]) {
      expect(isValidAbaRoutingNumber(bad), bad).toBe(false);
    }
  });

  it('detects any single-character substitution in a valid number', () => {
    const validAba = fc
      .string({ unit: fc.constantFrom(...DIGITS), minLength: 8, maxLength: 8 })
      .map(abaWithCheckDigit)
      .filter((aba) => aba !== '000000000');
    fc.assert(
      fc.property(validAba, fc.nat(8), fc.constantFrom(...DIGITS, 'A', ' ', '-'), (aba, i, ch) => {
        expect(isValidAbaRoutingNumber(aba)).toBe(true);
        fc.pre(aba.charAt(i) !== ch);
        expect(isValidAbaRoutingNumber(replaceAt(aba, i, ch))).toBe(false);
      }),
    );
  });
});

describe('isValidIban and normaliseIban', () => {
  // Sources: Wikipedia "International Bank Account Number" and the ECBS/SWIFT IBAN registry examples.
  const printed = [
    'GB82 WEST 1234 5698 7654 32',
    'DE89 3704 0044 0532 0130 00',
    'FR14 2004 1010 0505 0001 3M02 606',
    'NL91ABNA0417164300',
    'CH93 0076 2011 6238 5295 7',
  ];

  it.each(printed)('accepts %s in printed and electronic form', (iban) => {
    expect(isValidIban(iban)).toBe(true);
    expect(isValidIban(iban.replaceAll(' ', ''))).toBe(true);
  });

  it('rejects a changed digit, a wrong length and malformed input', () => {
    for (const bad of [
      'GB82 WEST 1234 5698 7654 33',
      'DE89 3704 0044 0532 0130 01',
      'GB82WEST1234569876543', // one short for GB (22)
      'DE89370400440532013000' + '0', // one long for DE (22)
      'GB82-WEST-1234-5698-7654-32',
      '82GBWEST12345698765432',
      'GBX2WEST12345698765432',
      'GB82WEST1234569876543Ä',
      'GB82',
      '',
    ]) {
      expect(isValidIban(bad), bad).toBe(false);
    }
  });

  it('holds each listed country to its length, including the brief’s 17', () => {
    const lengths: Record<string, number> = {
      DE: 22,
      GB: 22,
      FR: 27,
      NL: 18,
      ES: 24,
      IT: 27,
      CH: 21,
      BE: 16,
      IE: 22,
      AT: 20,
      PL: 28,
      PT: 25,
      SE: 24,
      DK: 18,
      NO: 15,
      FI: 18,
      LU: 20,
    };
    for (const [country, length] of Object.entries(lengths)) {
      const right = makeIban(country, '1'.repeat(length - 4));
      expect(isValidIban(right), right).toBe(true);
      // A correct mod-97 at the wrong length must still fail.
      if (length > 15) expect(isValidIban(makeIban(country, '1'.repeat(length - 5))), country).toBe(false);
      if (length < 34) expect(isValidIban(makeIban(country, '1'.repeat(length - 3))), country).toBe(false);
    }
  });

  it('holds unlisted countries to the general 15-34 bound only', () => {
    expect(isValidIban(makeIban('ZZ', '1'.repeat(11)))).toBe(true);
    expect(isValidIban(makeIban('ZZ', '1'.repeat(30)))).toBe(true);
    expect(isValidIban(makeIban('ZZ', '1'.repeat(10)))).toBe(false);
    expect(isValidIban(makeIban('ZZ', '1'.repeat(31)))).toBe(false);
  });

  it('refuses check digits 00, 01 and 99, which alias valid ones under mod 97', () => {
    // Find GB BBANs whose real check digits are 97, 98 and 02, then swap in the alias.
    const aliases: Record<string, string> = { '97': '00', '98': '01', '02': '99' };
    const found = new Set<string>();
    for (let n = 0; found.size < 3 && n < 100_000; n += 1) {
      const iban = makeIban('GB', 'WEST' + String(n).padStart(14, '0'));
      const alias = aliases[iban.slice(2, 4)];
      if (alias === undefined || found.has(alias)) continue;
      found.add(alias);
      const aliased = iban.slice(0, 2) + alias + iban.slice(4);
      expect(ibanMod97(aliased.slice(4) + aliased.slice(0, 4))).toBe(1);
      expect(isValidIban(iban)).toBe(true);
      expect(isValidIban(aliased)).toBe(false);
    }
    expect(found.size).toBe(3);
  });

  it('is upper case only; normaliseIban makes typed input valid', () => {
    const typed = '  gb82 west 1234\t5698\u00a07654 32 ';
    expect(isValidIban(typed)).toBe(false);
    expect(normaliseIban(typed)).toBe('GB82WEST12345698765432');
    expect(isValidIban(normaliseIban(typed))).toBe(true);
    expect(normaliseIban('fr14 2004 1010 0505 0001 3m02 606')).toBe('FR1420041010050500013M02606');
  });

  it('upper-cases ASCII only, so lookalike letters stay invalid', () => {
    // 'ı' (dotless i) upper-cases to ASCII 'I' under toUpperCase.
    expect(normaliseIban('ıe')).toBe('ıE');
  });

  it('detects any same-class single-character substitution (digit for digit, letter for letter)', () => {
    // Listed countries at their lengths plus an unlisted one; BBANs mix letters and digits.
    const country = fc.constantFrom<[string, number]>(
      ['GB', 22],
      ['DE', 22],
      ['FR', 27],
      ['NL', 18],
      ['CH', 21],
      ['NO', 15],
      ['PL', 28],
      ['MT', 31],
      ['ZZ', 34],
    );
    const validIban = country.chain(([cc, length]) =>
      fc
        .string({ unit: fc.constantFrom(...DIGITS, ...UPPER), minLength: length - 4, maxLength: length - 4 })
        .map((bban) => makeIban(cc, bban)),
    );
    fc.assert(
      fc.property(validIban, fc.nat(), fc.nat(), (iban, at, pick) => {
        expect(isValidIban(iban)).toBe(true);
        const i = at % iban.length;
        const pool = DIGITS.includes(iban.charAt(i)) ? DIGITS : UPPER;
        const ch = pool.charAt(pick % pool.length);
        fc.pre(ch !== iban.charAt(i));
        expect(isValidIban(replaceAt(iban, i, ch))).toBe(false);
      }),
      { numRuns: 1000 },
    );
  });

  it('does NOT catch every digit-for-letter substitution: mod-97 alone cannot (known limit)', () => {
    // A letter is two decimal digits, so swapping classes shifts the number; about 1 in 97 such
    // changes still leaves remainder 1. Catching these needs per-country BBAN formats.
    expect(isValidIban('NL91ABNA0417164300')).toBe(true);
    expect(isValidIban('NL91ABNAW417164300')).toBe(true);
  });
});

describe('isValidBic', () => {
  // Sources: Deutsche Bank Frankfurt (DEUTDEFF, branch DEUTDEFF500) and Nedbank Johannesburg
  // (NEDSZAJJXXX), both the examples used in ISO 9362's Wikipedia article.
  it.each(['DEUTDEFF', 'DEUTDEFF500', 'NEDSZAJJXXX'])('accepts %s', (bic) => {
    expect(isValidBic(bic)).toBe(true);
  });

  it.each([
    'DEUTDEF',
    'deutdeff',
    'DEUT1EFF',
    'DEUTDEFF50',
    'DEUTDEFF5000',
    'DEUTD3FF',
    ' DEUTDEFF',
    'DEUTDEFF ',
    'DEUTDEff',
    'DEUTDEFF5_0',
    '',
  ])('rejects %j', (bic) => {
    expect(isValidBic(bic)).toBe(false);
  });
});

describe('garbage input', () => {
  it('never throws and returns a boolean or string for any value', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.anything(), fc.string(), fc.string({ unit: 'binary' })),
        fc.oneof(fc.constantFrom(...STABLECOIN_NETWORKS), fc.anything()),
        (value, network) => {
          const v = value as string;
          expect(typeof isValidStablecoinAddress(network as StablecoinNetwork, v)).toBe('boolean');
          expect(typeof isValidAbaRoutingNumber(v)).toBe('boolean');
          expect(typeof isValidIban(v)).toBe('boolean');
          expect(typeof isValidBic(v)).toBe('boolean');
          expect(typeof normaliseIban(v)).toBe('string');
          const decoded = decodeBase58(v);
          expect(decoded === undefined || decoded instanceof Uint8Array).toBe(true);
        },
      ),
    );
  });

  it('lists the five networks', () => {
    expect([...STABLECOIN_NETWORKS].sort()).toEqual(['BASE', 'ETHEREUM', 'POLYGON', 'SOLANA', 'TRON']);
    expect(isValidStablecoinAddress('BITCOIN' as StablecoinNetwork, '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa')).toBe(false);
  });
});
