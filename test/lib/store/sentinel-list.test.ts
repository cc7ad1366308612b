import { describe, expect, it } from 'vitest';

import { formatSentinelAddress, readSentinelList } from '../../../src/lib/store/sentinel-list.js';

describe('readSentinelList', () => {
  it('reads host:port entries, names and IPv6 addresses in brackets, trimming spaces', () => {
    expect(readSentinelList(' 10.0.0.1:26379, sentinel-2.internal:26380 ,[::1]:26381')).toEqual({
      addresses: [
        { host: '10.0.0.1', port: 26379 },
        { host: 'sentinel-2.internal', port: 26380 },
        { host: '::1', port: 26381 },
      ],
      problems: [],
    });
  });

  it('refuses an entry without a port, an empty entry, a port out of range and a repeat, naming each', () => {
    const { problems } = readSentinelList('sentinel-1,,10.0.0.1:0,10.0.0.2:65536,::1:26379,a:1,A:1');
    expect(problems).toEqual([
      '"sentinel-1" is not host:port (an IPv6 address goes in brackets: [::1]:26379)',
      'entry 2 is empty; write host:port pairs separated by single commas',
      '"10.0.0.1:0": the port must be 1 to 65535',
      '"10.0.0.2:65536": the port must be 1 to 65535',
      '"::1:26379" is not host:port (an IPv6 address goes in brackets: [::1]:26379)',
      '"A:1" is listed twice',
    ]);
  });

  it('refuses a URL or credentials in an entry: the passwords have settings of their own', () => {
    expect(readSentinelList('redis://10.0.0.1:26379').problems).toHaveLength(1);
    expect(readSentinelList('user:secret@10.0.0.1:26379').problems).toEqual([
      '"user:secret@10.0.0.1:26379" is not host:port (an IPv6 address goes in brackets: [::1]:26379)',
    ]);
  });
});

describe('formatSentinelAddress', () => {
  it('writes an IPv6 address in brackets, as the list takes it', () => {
    expect(formatSentinelAddress({ host: '::1', port: 26379 })).toBe('[::1]:26379');
    expect(formatSentinelAddress({ host: '127.0.0.1', port: 26379 })).toBe('127.0.0.1:26379');
  });
});
