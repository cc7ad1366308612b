/**
 * A preload (`node --import tsx --import ./test/support/loaded-modules.ts ...`) that writes, when
 * the process exits, the packages whose CommonJS modules it loaded (`require.cache`, which also
 * holds those an ES module imported) to the file LOADED_MODULES_FILE names: how a test sees
 * what a real process loaded. The OpenTelemetry packages are CommonJS to Node.
 */
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const file = process.env.LOADED_MODULES_FILE;
if (file !== undefined && file !== '') {
  const cache = createRequire(import.meta.url).cache;
  process.on('exit', () => {
    const packages = new Set<string>();
    for (const path of Object.keys(cache)) {
      const match = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(path.slice(path.lastIndexOf('node_modules/')));
      if (match !== null) packages.add(match[1]!);
    }
    writeFileSync(file, JSON.stringify([...packages].sort()));
  });
}
