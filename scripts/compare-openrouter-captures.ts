/**
 * `tsx scripts/compare-openrouter-captures.ts <capture-folder> [--fixtures <folder>] [--refresh-fixtures]`
 *
 * Names every difference between a capture of OpenRouter's answers (`npm run test:live -- --capture <folder>`) and
 * the fixtures the fake serves (tests/fixtures/openrouter/): fields added, removed or of another type, error
 * shapes, streaming event types. Exit 0: none; 1: some (each on a line); 2: bad usage.
 * `--refresh-fixtures` copies the capture over the fixtures instead (then run the tests: the fake now serves it).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { compareCaptureFolder, describeDifference, refreshFixtures } from './live/compare-captures.js';
import { fakeMessagesStream } from './live/fake-stream.js';

const FIXTURES = fileURLToPath(new URL('../tests/fixtures/openrouter/', import.meta.url));
const USAGE = 'Usage: tsx scripts/compare-openrouter-captures.ts <capture-folder> [--fixtures <folder>] [--refresh-fixtures]';

async function main(): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: { fixtures: { type: 'string' }, 'refresh-fixtures': { type: 'boolean', default: false }, help: { type: 'boolean', default: false } },
    });
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const capture = positionals[0];
  if (capture === undefined || positionals.length > 1) {
    console.error(USAGE);
    return 2;
  }
  const fixtures = path.resolve(values.fixtures ?? FIXTURES);
  if (values['refresh-fixtures']) {
    const written = await refreshFixtures(path.resolve(capture), fixtures);
    console.log(`Refreshed ${written.length} fixture file(s) in ${fixtures} from ${capture}: ${written.join(', ')}.`);
    console.log("Now run the tests (the fake serves these files), and update that folder's README.md: what each file is, and where it came from.");
    return 0;
  }
  const differences = await compareCaptureFolder(path.resolve(capture), fixtures, { fakeStream: fakeMessagesStream });
  if (differences.length === 0) {
    console.log(`No differences between ${capture} and ${fixtures}.`);
    return 0;
  }
  console.log(`${differences.length} difference(s) between ${capture} and the fixtures (${fixtures}):`);
  for (const difference of differences) console.log(`- ${describeDifference(difference)}`);
  return 1;
}

process.exitCode = await main();
