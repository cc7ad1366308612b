/**
 * src/cli/closers.ts: listeners close before every resource, each kind newest first, whatever
 * the order they were added in; a failure closes the rest and is reported; what is still open
 * names the one closing first, with what it waits for.
 */
import { describe, expect, it } from 'vitest';

import { Closers } from '../../src/cli/closers.js';

describe('Closers', () => {
  it('closes the listeners first, newest first, then the resources, newest first', async () => {
    const closers = new Closers();
    const closed: string[] = [];
    const record = (name: string) => async () => void closed.push(name);
    closers.add('database', record('database'));
    closers.addListener('admin listener', record('admin listener'));
    closers.add('store', record('store'));
    closers.addListener('core server', record('core server'));
    closers.addListener('gateway server', record('gateway server'));
    expect(closers.stillOpen()).toEqual(['gateway server', 'core server', 'admin listener', 'store', 'database']);
    await closers.closeAll();
    expect(closed).toEqual(['gateway server', 'core server', 'admin listener', 'store', 'database']);
    expect(closers.stillOpen()).toEqual([]);
  });

  it('closes the rest when one fails, then throws every failure together', async () => {
    const closers = new Closers();
    const closed: string[] = [];
    closers.add('database', async () => void closed.push('database'));
    closers.add('store', () => Promise.reject(new Error('connection reset')));
    closers.addListener('server', () => Promise.reject(new Error('not running')));
    await expect(closers.closeAll()).rejects.toThrow(
      'closing server failed: not running; closing store failed: connection reset',
    );
    expect(closed).toEqual(['database']);
  });

  it('names what is still open while closing, the one closing first with what it waits for', async () => {
    const closers = new Closers();
    let finish!: () => void;
    closers.add('database', async () => undefined);
    closers.addListener(
      'gateway server',
      () => new Promise<void>((resolve) => (finish = resolve)),
      () => ['GET /slow (9.8 s)'],
    );
    const closing = closers.closeAll();
    expect(closers.stillOpen()).toEqual(['gateway server (GET /slow (9.8 s))', 'database']);
    finish();
    await closing;
    expect(closers.stillOpen()).toEqual([]);
  });
});
