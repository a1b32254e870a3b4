// The bounce exports of test/fixtures/bounces/, one per supported shape, modelled on the platforms' documented
// export columns. Each address says what its row is: `<platform>.hardN`, `.softN` or `.otherN` (a complaint,
// an unsubscribe: not a bounce).
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const BOUNCE_FIXTURES = join(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  'fixtures',
  'bounces',
);

export const BOUNCE_FIXTURE_FILES = readdirSync(BOUNCE_FIXTURES).sort();

export type FixtureKind = 'hard' | 'soft' | 'other';

/** The addresses of a fixture, lower-cased, with the kind their local part names. */
export function fixtureAddresses(file: string): { email: string; kind: FixtureKind }[] {
  const text = readFileSync(join(BOUNCE_FIXTURES, file), 'utf8');
  const found = text.match(/[a-z]+\.(hard|soft|other)\d+@example\.(com|org|net)/gi) ?? [];
  return found.map((address) => ({
    email: address.toLowerCase(),
    kind: /\.(hard|soft|other)\d/i.exec(address)![1].toLowerCase() as FixtureKind,
  }));
}

/** Every fixture's addresses. */
export function allFixtureAddresses(): { email: string; kind: FixtureKind }[] {
  return BOUNCE_FIXTURE_FILES.flatMap(fixtureAddresses);
}
