// The self-check of a node's source address on the command line (docs/operations.md, "Self-check"): `--dnsbl`,
// shared by `doctor`, `worker` and `serve`, and the words a node prints when its check ends.
import type { Logger } from 'pino';
import { Option } from 'commander';
import {
  DEFAULT_DNSBL_ZONES,
  describeAddressCheck,
  type AddressCheck,
} from '../../service/engine/online/addressCheck.js';
import { sentence } from '../../service/engine/online/identity.js';
import { CliError } from './errors.js';

export interface SelfCheckCliOptions {
  dnsbl?: string;
}

export const dnsblOption = (): Option =>
  new Option(
    '--dnsbl <zones>',
    `DNS block lists the source address is checked against, comma-separated, or none (default ${DEFAULT_DNSBL_ZONES.join(',')})`,
  );

/** `--dnsbl`'s zones (undefined: the default ones). */
export function dnsblFrom(options: SelfCheckCliOptions): readonly string[] | undefined {
  const raw = options.dnsbl?.trim();
  if (raw === undefined) return undefined;
  if (raw === '' || raw.toLowerCase() === 'none') return [];
  const zones = raw
    .split(',')
    .map((zone) => zone.trim().toLowerCase().replace(/\.$/, ''))
    .filter(Boolean);
  for (const zone of zones)
    if (!/^([a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z0-9-]{2,}$/.test(zone))
      throw new CliError(
        `--dnsbl takes DNS zones separated by commas (e.g. zen.spamhaus.org); '${zone}' is not one.`,
      );
  return zones;
}

/** What the check found, then each problem with what to do. */
export function selfCheckLines(check: AddressCheck): string[] {
  return [
    ...describeAddressCheck(check),
    ...check.problems.map(
      (problem) => `${problem.kind === 'listed' ? 'LISTED: ' : 'Problem: '}${sentence(problem.text)}`,
    ),
  ];
}

/** Says each result of a node's self-check in its log: a listed address as a warning, with what to do. */
export function selfCheckLogger(logger: Logger): (check: AddressCheck) => void {
  return (check) => {
    const summary = check.is_listed
      ? `Self-check: source address ${check.address} is LISTED on a DNS block list: mail servers that use it refuse this node, and its mailbox checks come back unknown.`
      : check.ok
        ? `Self-check: source address ${check.address} is fit: reverse DNS confirmed${check.helo?.matches ? ', the HELO name matches' : ''}, not listed on ${check.block_lists.length} block list(s).`
        : `Self-check: source address ${check.address} has ${check.problems.length} problem(s), and is not listed.`;
    const write = (line: string) => (check.is_listed ? logger.warn(line) : logger.info(line));
    write(summary);
    for (const line of selfCheckLines(check)) write(`  ${line}`);
  };
}
