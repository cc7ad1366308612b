import { afterAll, describe, expect, it } from 'vitest';
import { killAllCliProcesses, runCli } from './cli-process.js';

describe('configuration at start-up', () => {
  afterAll(killAllCliProcesses);

  it.each([
    ['PORT', 'abc'],
    ['FXGATE_RATE_LIMIT_READS', '0'],
    ['DATABASE_URL', 'mysql://localhost/x'],
    ['FXGATE_JWT_ISSUER', 'fx-service,,openfx'],
  ])('a bad %s=%s stops the command with exit 2, naming the variable', async (name, value) => {
    const result = await runCli(['migrate'], { [name]: value });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(new RegExp(`^fxgate: invalid configuration:\\n  - ${name}: `));
    expect(result.stdout).toBe('');
  });
});
