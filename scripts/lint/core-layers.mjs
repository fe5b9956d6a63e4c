/**
 * The folders of src-main/core in layers, and the rooms of core/jobs in layers of their own (docs/ARCHITECTURE.md §9). A file cycle check sees files: two folders can
 * import each other through files that form no cycle (gateway/gateway.ts → jobs/cost.ts, jobs/lifecycle.ts →
 * gateway/ceiling.ts). So eslint.config.js declares core's folders in an order, and each folder may import only the
 * folders before it: then no two import each other, through any number of others. This turns the order into
 * import-x/no-restricted-paths zones, and refuses a folder the order does not place.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';

const SEE = 'docs/ARCHITECTURE.md §9';

/**
 * One zone per pair of folders: a folder may not import any folder after it in `layers`. Throws, naming it, when
 * `coreDir` holds a folder `layers` does not list (a new folder must be placed before it passes lint), a module
 * outside every folder, or when `layers` lists a folder that is not there.
 * @param {string} coreDir absolute path of the folder whose subfolders are layered
 * @param {readonly string[]} layers its subfolders, lowest first
 * @param {string} [where] where the list is declared, for the messages
 * @param {{ rootFiles?: boolean }} [options] rootFiles: modules may lie beside the folders (src-main/cli's entry points,
 *   which import every folder and which none imports)
 * @returns {{ target: string; from: string; message: string }[]}
 */
export function coreLayerZones(coreDir, layers, where = 'CORE_LAYERS in eslint.config.js', options = {}) {
  const WHERE = where;
  const name = path.basename(coreDir);
  const entries = readdirSync(coreDir, { withFileTypes: true });
  const folders = entries.filter((entry) => entry.isDirectory()).map((entry) => entry.name);
  const problems = [
    ...folders
      .filter((folder) => !layers.includes(folder))
      .map((folder) => `${name}/${folder} is in no layer: add it to ${WHERE}, after every folder it imports and before every folder that imports it.`),
    ...entries
      .filter((entry) => !options.rootFiles && !entry.isDirectory() && /\.[cm]?[jt]s$/.test(entry.name))
      .map((entry) => `${name}/${entry.name} lies outside ${name}'s folders: every module of ${name} lives in one of them (${WHERE}).`),
    ...layers.filter((folder) => !folders.includes(folder)).map((folder) => `${WHERE} lists ${name}/${folder}, which is not there: take it out.`),
    ...layers.filter((folder, i) => layers.indexOf(folder) !== i).map((folder) => `${WHERE} lists ${name}/${folder} twice.`),
  ];
  if (problems.length > 0) throw new Error(`${problems.join('\n')} (${SEE})`);

  const order = layers.join(' → ');
  return layers.flatMap((folder, i) =>
    layers.slice(i + 1).map((later) => ({
      target: path.join(coreDir, folder),
      from: path.join(coreDir, later),
      message:
        `${name}/${folder} may not import ${name}/${later}, which comes after it in ${name}'s layers (${order}; ${WHERE}): ` +
        `a folder imports only those before it, so no two import each other. Move what both need into a folder below both, or pass it in (${SEE}).`,
    })),
  );
}
