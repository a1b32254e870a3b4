// Service names of DESIGN.md "Conventions": what a key may be configured for, and what `--services` takes.
export const SERVICE_NAMES = [
  'validation',
  'corrections',
  'intelligence',
  'eam',
  'alternate_email',
  'email_append',
  'postal_append',
] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

export function isServiceName(value: string): value is ServiceName {
  return (SERVICE_NAMES as readonly string[]).includes(value);
}

/**
 * Parses a `--services` style list: comma-separated names, `all` for every one.
 * Returns the names, or the first word that is not a service.
 */
export function parseServiceList(
  text: string,
): { ok: true; services: ServiceName[] } | { ok: false; unknown: string } {
  const services = new Set<ServiceName>();
  for (const word of text.split(',').map((w) => w.trim().toLowerCase())) {
    if (word === '') continue;
    if (word === 'all') SERVICE_NAMES.forEach((name) => services.add(name));
    else if (isServiceName(word)) services.add(word);
    else return { ok: false, unknown: word };
  }
  return { ok: true, services: [...services] };
}
