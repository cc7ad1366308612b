/**
 * Base58 decoding with the Bitcoin alphabet, which TRON and Solana addresses both use. Only
 * decoding lives here: the service checks addresses users give it and never mints its own.
 */

const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** Maps an ASCII code to its digit value, -1 where the character is not in the alphabet (0, O, I, l, ...). */
const DIGIT_OF: Int8Array = (() => {
  const table = new Int8Array(128).fill(-1);
  for (let i = 0; i < ALPHABET.length; i += 1) table[ALPHABET.charCodeAt(i)] = i;
  return table;
})();

/**
 * Decodes `input`, or returns `undefined` if it holds a character outside the alphabet. Each
 * leading '1' is a zero byte, because plain base conversion would lose leading zeros and with them
 * the length that address formats rely on. The empty string decodes to no bytes.
 *
 * The work is quadratic in the input length, so callers checking untrusted input should bound
 * its length first (addresses are short).
 */
export function decodeBase58(input: string): Uint8Array | undefined {
  if (typeof input !== 'string') return undefined;
  let zeros = 0;
  while (zeros < input.length && input.charCodeAt(zeros) === 49 /* '1' */) zeros += 1;

  // Base-256 digits of the value, least significant first, grown as the value grows.
  const digits: number[] = [];
  for (let i = zeros; i < input.length; i += 1) {
    const code = input.charCodeAt(i);
    const value = code < 128 ? (DIGIT_OF[code] ?? -1) : -1;
    if (value < 0) return undefined;
    let carry = value;
    for (let j = 0; j < digits.length; j += 1) {
      carry += (digits[j] ?? 0) * 58;
      digits[j] = carry & 0xff;
      carry >>= 8;
    }
    while (carry > 0) {
      digits.push(carry & 0xff);
      carry >>= 8;
    }
  }

  const out = new Uint8Array(zeros + digits.length);
  for (let k = 0; k < digits.length; k += 1) out[out.length - 1 - k] = digits[k] ?? 0;
  return out;
}
