/**
 * `openrouter-delegate doctor [--json]`: checks the whole set-up — claude, the bridge's registration, the service, the
 * key, OpenRouter … — and says what to do about each failed check. Exit 1 when a check fails.
 */
import type { Locations } from '../../platform/locations.js';
import { runDoctor } from '../../core/setup/doctor.js';
import { renderDoctorLines } from '../../core/setup/present.js';
import { setupContext } from '../support/bridge-setup.js';
import { out } from '../support/command-support.js';

export async function doctorCommand(locations: Locations, json: boolean): Promise<number> {
  const report = await runDoctor((await setupContext(locations)).doctorDeps());
  if (json) out(JSON.stringify(report, null, 2));
  else for (const line of renderDoctorLines(report)) out(line);
  return report.ok ? 0 : 1;
}
