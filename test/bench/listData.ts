// The list benchmark's input: a deterministic 1,000,000-row, 7-column CSV of about 85 MB (email, first, last,
// street, city, state, zip) with a header row, quoted fields (streets with commas, names with quotes), typos
// of provider domains, role and disposable addresses, syntax errors and duplicate addresses. Generated once
// into test/bench/out/ (gitignored) and reused while its generator version and row count match.
import {
  createWriteStream,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';

const GENERATOR_VERSION = 4;

/** A small, fast, seeded PRNG (mulberry32): the same file on every machine. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FIRST = [
  'James',
  'Mary',
  'John',
  'Patricia',
  'Robert',
  'Jennifer',
  'Michael',
  'Linda',
  'William',
  'Elizabeth',
  'David',
  'Barbara',
  'Richard',
  'Susan',
  'Joseph',
  'Jessica',
  'Thomas',
  'Sarah',
  'Charles',
  'Karen',
  'Chris',
  'Nancy',
  'Daniel',
  'Lisa',
  'Matthew',
  'Betty',
  'Anthony',
  'Sandra',
  'Mark',
  'Ashley',
  'Zoë',
  'José',
  'Renée',
];
const LAST = [
  'Smith',
  'Johnson',
  'Williams',
  'Brown',
  'Jones',
  'Garcia',
  'Miller',
  'Davis',
  'Rodriguez',
  'Martinez',
  'Hernandez',
  'Lopez',
  'Gonzalez',
  'Wilson',
  'Anderson',
  'Thomas',
  'Taylor',
  'Moore',
  'Jackson',
  'Martin',
  'Lee',
  'Perez',
  'Thompson',
  'White',
  'Harris',
  'Sanchez',
  'Clark',
  'Ramirez',
  'Lewis',
  'Robinson',
  "O'Brien",
  'Müller',
];
const STREETS = [
  'Main St',
  'Oak Ave',
  'Pine Rd',
  'Maple Dr',
  'Cedar Ln',
  'Elm St',
  'Washington Blvd',
  'Lake View Ct',
  'Hill St',
  'Park Ave',
  'Sunset Blvd',
  'River Rd',
  'Church St',
  'Mill Rd',
  'Spring St',
];
const CITIES = [
  'Springfield',
  'Riverside',
  'Franklin',
  'Greenville',
  'Bristol',
  'Clinton',
  'Fairview',
  'Salem',
  'Madison',
  'Georgetown',
  'Arlington',
  'Ashland',
  'Dover',
  'Oxford',
  'Jackson',
  'Burlington',
  'Manchester',
];
const STATES = [
  'AL',
  'AK',
  'AZ',
  'AR',
  'CA',
  'CO',
  'CT',
  'DE',
  'FL',
  'GA',
  'HI',
  'ID',
  'IL',
  'IN',
  'IA',
  'KS',
  'KY',
  'LA',
  'ME',
  'MD',
  'MA',
  'MI',
  'MN',
  'MS',
  'MO',
  'MT',
  'NE',
  'NV',
  'NH',
  'NJ',
  'NM',
  'NY',
  'NC',
  'ND',
  'OH',
  'OK',
];
const PROVIDERS = [
  'gmail.com',
  'yahoo.com',
  'hotmail.com',
  'outlook.com',
  'aol.com',
  'icloud.com',
  'comcast.net',
  'msn.com',
  'live.com',
  'att.net',
];
const TYPOS = [
  'gmial.com',
  'gmail.con',
  'yaho.com',
  'hotmial.com',
  'outlok.com',
  'gmail.co',
  'yahoo.cm',
  'gamil.com',
];
const DISPOSABLE = [
  'mailinator.com',
  'guerrillamail.com',
  '10minutemail.com',
  'trashmail.com',
  'yopmail.com',
];
const ROLES = ['info', 'sales', 'support', 'admin', 'contact', 'office', 'billing', 'hr'];
const WORDS = [
  'acme',
  'globex',
  'initech',
  'umbrella',
  'stark',
  'wayne',
  'hooli',
  'vandelay',
  'wonka',
  'tyrell',
  'cyberdyne',
  'soylent',
  'massive',
  'dynamic',
  'blue',
  'north',
  'summit',
  'pioneer',
  'apex',
  'vertex',
  'nova',
];
const TLDS = ['com', 'com', 'com', 'net', 'org', 'io', 'co.uk', 'de', 'biz'];

export interface ListData {
  readonly path: string;
  readonly rows: number;
  readonly bytes: number;
}

function quote(field: string): string {
  return `"${field.replace(/"/g, '""')}"`;
}

/** Writes (or reuses) the benchmark file with `rows` data rows below a header row. */
export async function ensureListData(outDir: string, rows = 1_000_000): Promise<ListData> {
  const path = join(outDir, `list-${rows}.csv`);
  const stamp = `${path}.json`;
  const wanted = JSON.stringify({ version: GENERATOR_VERSION, rows });
  if (existsSync(path) && existsSync(stamp) && readFileSync(stamp, 'utf8') === wanted)
    return { path, rows, bytes: statSync(path).size };
  mkdirSync(dirname(path), { recursive: true });
  const random = prng(20240429);
  const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)];
  const businessDomain = () => `${pick(WORDS)}${pick(WORDS)}${Math.floor(random() * 500)}.${pick(TLDS)}`;
  const emails: string[] = [];
  const temporary = `${path}.tmp`;
  const out = createWriteStream(temporary);
  let buffer = 'email,first_name,last_name,street,city,state,zip\n';
  for (let i = 0; i < rows; i++) {
    const first = pick(FIRST);
    const last = pick(LAST);
    const roll = random();
    let email: string;
    if (roll < 0.05 && emails.length > 0) {
      email = emails[Math.floor(random() * emails.length)]!; // duplicate of an earlier address
    } else {
      const local = `${first}.${last}${Math.floor(random() * 1000)}`.toLowerCase().replace(/[^a-z0-9.]/g, '');
      if (roll < 0.08) email = `${local}@${pick(TYPOS)}`;
      else if (roll < 0.11) email = `${pick(ROLES)}@${businessDomain()}`;
      else if (roll < 0.13) email = `${local}@${pick(DISPOSABLE)}`;
      else if (roll < 0.145)
        email = `${local}${pick(['', ' ', '@@', ','])}${pick(PROVIDERS)}`; // syntax errors
      else if (roll < 0.6) email = `${local}@${pick(PROVIDERS)}`;
      else email = `${local}@${businessDomain()}`;
      if (random() < 0.2) email = email.replace(/^./, (c) => c.toUpperCase());
      if (emails.length < 200_000) emails.push(email);
      else emails[Math.floor(random() * emails.length)] = email;
    }
    const number = 1 + Math.floor(random() * 9999);
    const street =
      random() < 0.35
        ? quote(`${number} ${pick(STREETS)}, Apt ${1 + Math.floor(random() * 40)}`)
        : `${number} ${pick(STREETS)}`;
    const lastField = last.includes("'") && random() < 0.5 ? quote(`${last} "Jr"`) : last;
    const emailField = email.includes(',') || email.includes(' ') ? quote(email) : email;
    const zip5 = String(10000 + Math.floor(random() * 89999));
    const zip = random() < 0.6 ? `${zip5}-${String(1000 + Math.floor(random() * 8999))}` : zip5;
    buffer += `${emailField},${first},${lastField},${street},${pick(CITIES)},${pick(STATES)},${zip}\n`;
    if (buffer.length > 1 << 20) {
      if (!out.write(buffer)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
      buffer = '';
    }
  }
  out.write(buffer);
  await new Promise<void>((resolve, reject) =>
    out.end((error?: Error | null) => (error ? reject(error) : resolve())),
  );
  renameSync(temporary, path);
  writeFileSync(stamp, wanted);
  return { path, rows, bytes: statSync(path).size };
}
