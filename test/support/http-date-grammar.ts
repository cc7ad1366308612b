/**
 * The grammar of the deprecation and sunset headers, from their RFCs, as regular expressions
 * that tests hold the gateway's headers to (written from the RFCs, not from the code).
 */

/** RFC 9110 section 5.6.7, IMF-fixdate: day-name "," SP date1 SP time-of-day SP GMT. */
export const IMF_FIXDATE =
  /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), (0[1-9]|[12]\d|3[01]) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} ([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60) GMT$/;

/** RFC 9745 section 2.1 with RFC 9651 section 3.3.7: a Date item is "@" and an Integer (an optional "-", 1 to 15 digits). */
export const SF_DATE = /^@-?\d{1,15}$/;

/**
 * RFC 8288 section 3: `Link: <URI-Reference> *( OWS ";" OWS link-param )`, link-values separated
 * by commas; a link-param is a token, and "=" with a token or a quoted-string. The URI-Reference
 * is simplified to what may stand between `<` and `>` (no space, no `>`).
 */
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const QUOTED = '"(?:[^"\\\\]|\\\\.)*"';
const LINK_PARAM = `${TOKEN}(?:[ \\t]*=[ \\t]*(?:${TOKEN}|${QUOTED}))?`;
const LINK_VALUE = `<[^<>\\s]*>(?:[ \\t]*;[ \\t]*${LINK_PARAM})*`;
export const LINK = new RegExp(`^${LINK_VALUE}(?:[ \\t]*,[ \\t]*${LINK_VALUE})*$`);

/** The link-values of a Link header that matches LINK: each target with its `rel`. */
export function linkRelations(header: string): { target: string; rel: string | undefined }[] {
  return [...header.matchAll(new RegExp(LINK_VALUE, 'g'))].map(([value]) => ({
    target: /^<([^>]*)>/.exec(value)![1]!,
    rel: /;[ \t]*rel[ \t]*=[ \t]*(?:"([^"]*)"|([^;,\s]+))/i
      .exec(value)
      ?.slice(1)
      .find((part) => part !== undefined),
  }));
}
