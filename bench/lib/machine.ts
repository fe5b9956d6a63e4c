/** The header of a report: what machine, which Node, when (figures mean little without it). */
import os from 'node:os';

export function machineHeader(title: string): string {
  const cpus = os.cpus();
  const memory = `${(os.totalmem() / 1024 ** 3).toFixed(0)} GB RAM`;
  return [
    title,
    `machine: ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${cpus.length} cores, ${memory}, ${os.type()} ${os.release()} ${os.arch()}; load average ${os.loadavg()[0]?.toFixed(2)} at start`,
    `node:    ${process.version}`,
    `date:    ${new Date().toISOString()}`,
  ].join('\n');
}
