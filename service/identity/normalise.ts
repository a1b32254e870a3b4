// How reference data and queries are compared: email addresses (and their hashes), names, and U.S. postal
// addresses. Imported rows and incoming queries go through the same functions, so what matches is decided
// in one place (docs/identity.md, "Matching").
import { hash } from 'node:crypto';
import { normaliseEmailForHash } from '../../shared/api/bulk.js';
import { checkSyntax, standardise } from '../engine/syntax.js';

// ---------------------------------------------------------------------------------------------------------
// Email addresses

/**
 * The stored and compared form of an address: standardised (surrounding white space and `mailto:` removed),
 * then lower-cased and stripped of white space — the preparation the spec gives for `md5_email` and
 * `sha1_email`, so an address and its hashes always agree. Undefined for an address that fails the syntax
 * checks (the per-record error `Invalid identifier.`).
 */
export function canonicalEmail(input: string): string | undefined {
  // A lookup, not a verdict: white space around the address is not part of it (as the hashes' preparation).
  const standard = standardise(input.trim());
  if (!checkSyntax(standard).ok) return undefined;
  return normaliseEmailForHash(standard);
}

export function md5Of(canonical: string): Buffer {
  return hash('md5', canonical, 'buffer');
}

export function sha1Of(canonical: string): Buffer {
  return hash('sha1', canonical, 'buffer');
}

const MD5_HEX = /^[0-9a-fA-F]{32}$/;
const SHA1_HEX = /^[0-9a-fA-F]{40}$/;

/**
 * A hex digest as it is looked up: lower case, without surrounding white space; undefined when it is not
 * one of that length. Kept as text to the query (`unhex`): a Buffer per digest cost more than the lookup.
 */
export function digestHex(hex: string, kind: 'md5' | 'sha1'): string | undefined {
  const value = hex.trim();
  return (kind === 'md5' ? MD5_HEX : SHA1_HEX).test(value) ? value.toLowerCase() : undefined;
}

// ---------------------------------------------------------------------------------------------------------
// Names, streets, cities

const COMBINING_MARKS = /[\u0300-\u036f]/g;
const NON_ASCII = /[\u0080-\uffff]/;

/** Accents removed (NFKD without combining marks); ASCII text, the common case, is returned as is. */
function plain(text: string): string {
  return NON_ASCII.test(text) ? text.normalize('NFKD').replace(COMBINING_MARKS, '') : text;
}

/** Letters and digits only, lower case, accents removed: "O'Brien" and "OBRIEN" compare equal. */
export function nameKey(name: string): string {
  return plain(name)
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '');
}

// USPS street suffixes, directionals and unit designators (Publication 28), the spellings people write.
const STREET_WORDS: Readonly<Record<string, string>> = {
  street: 'st',
  str: 'st',
  avenue: 'ave',
  av: 'ave',
  aven: 'ave',
  road: 'rd',
  drive: 'dr',
  drv: 'dr',
  lane: 'ln',
  boulevard: 'blvd',
  boul: 'blvd',
  court: 'ct',
  place: 'pl',
  circle: 'cir',
  terrace: 'ter',
  parkway: 'pkwy',
  pky: 'pkwy',
  highway: 'hwy',
  square: 'sq',
  trail: 'trl',
  crossing: 'xing',
  expressway: 'expy',
  freeway: 'fwy',
  point: 'pt',
  route: 'rte',
  center: 'ctr',
  centre: 'ctr',
  heights: 'hts',
  mount: 'mt',
  mountain: 'mtn',
  junction: 'jct',
  north: 'n',
  south: 's',
  east: 'e',
  west: 'w',
  northeast: 'ne',
  northwest: 'nw',
  southeast: 'se',
  southwest: 'sw',
  apartment: 'apt',
  unit: 'apt',
  suite: 'ste',
  floor: 'fl',
  building: 'bldg',
  room: 'rm',
  number: 'apt',
  no: 'apt',
};

/**
 * A street line as compared: lower case, accents and punctuation removed, USPS abbreviations for suffixes,
 * directionals and unit designators (`#4`, `Unit 4` and `Apartment 4` are `apt 4`). Empty for no street.
 */
export function streetKey(street: string): string {
  const words = plain(street)
    .toLowerCase()
    .replace(/#/g, ' apt ')
    .replace(/[^a-z0-9/]+/g, ' ')
    .trim()
    .split(' ');
  const out: string[] = [];
  for (const word of words) {
    if (word === '') continue;
    const short = STREET_WORDS[word] ?? word;
    // "Apt #4" reads apt apt 4 after the replacements above.
    if (short === 'apt' && out.at(-1) === 'apt') continue;
    out.push(short);
  }
  return out.join(' ');
}

const CITY_WORDS: Readonly<Record<string, string>> = { saint: 'st', fort: 'ft', mount: 'mt' };

/** A city as compared: lower case, letters and digits, `Saint`/`St.` and `Fort`/`Ft.` alike. */
export function cityKey(city: string): string {
  return plain(city)
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim()
    .split(' ')
    .map((word) => CITY_WORDS[word] ?? word)
    .join('');
}

// ---------------------------------------------------------------------------------------------------------
// States and ZIP codes

/** USPS codes of the states, the District of Columbia, the territories and the military "states". */
const STATE_NAMES: Readonly<Record<string, string>> = {
  AL: 'Alabama',
  AK: 'Alaska',
  AZ: 'Arizona',
  AR: 'Arkansas',
  CA: 'California',
  CO: 'Colorado',
  CT: 'Connecticut',
  DE: 'Delaware',
  DC: 'District of Columbia',
  FL: 'Florida',
  GA: 'Georgia',
  HI: 'Hawaii',
  ID: 'Idaho',
  IL: 'Illinois',
  IN: 'Indiana',
  IA: 'Iowa',
  KS: 'Kansas',
  KY: 'Kentucky',
  LA: 'Louisiana',
  ME: 'Maine',
  MD: 'Maryland',
  MA: 'Massachusetts',
  MI: 'Michigan',
  MN: 'Minnesota',
  MS: 'Mississippi',
  MO: 'Missouri',
  MT: 'Montana',
  NE: 'Nebraska',
  NV: 'Nevada',
  NH: 'New Hampshire',
  NJ: 'New Jersey',
  NM: 'New Mexico',
  NY: 'New York',
  NC: 'North Carolina',
  ND: 'North Dakota',
  OH: 'Ohio',
  OK: 'Oklahoma',
  OR: 'Oregon',
  PA: 'Pennsylvania',
  RI: 'Rhode Island',
  SC: 'South Carolina',
  SD: 'South Dakota',
  TN: 'Tennessee',
  TX: 'Texas',
  UT: 'Utah',
  VT: 'Vermont',
  VA: 'Virginia',
  WA: 'Washington',
  WV: 'West Virginia',
  WI: 'Wisconsin',
  WY: 'Wyoming',
  AS: 'American Samoa',
  GU: 'Guam',
  MP: 'Northern Mariana Islands',
  PR: 'Puerto Rico',
  VI: 'U.S. Virgin Islands',
  FM: 'Federated States of Micronesia',
  MH: 'Marshall Islands',
  PW: 'Palau',
  AA: 'Armed Forces Americas',
  AE: 'Armed Forces Europe',
  AP: 'Armed Forces Pacific',
};

const STATE_BY_NAME = new Map<string, string>();
for (const [code, name] of Object.entries(STATE_NAMES)) {
  STATE_BY_NAME.set(cityKey(name), code);
  STATE_BY_NAME.set(code.toLowerCase(), code);
}
STATE_BY_NAME.set(cityKey('Virgin Islands'), 'VI');

/** A query's state: a USPS two-letter code, any case. Undefined otherwise. */
export function stateCode(value: string): string | undefined {
  const code = value.trim().toUpperCase();
  return code.length === 2 && code in STATE_NAMES ? code : undefined;
}

/** An imported state: a USPS code or the state's name ("New York", "new-york"). Undefined otherwise. */
export function stateFromImport(value: string): string | undefined {
  return stateCode(value) ?? STATE_BY_NAME.get(cityKey(value));
}

export interface Zip {
  readonly zip5: string;
  /** The ZIP+4 add-on, when known. */
  readonly plus4?: string;
}

/** `NNNNN`, `NNNNN-NNNN` or `NNNNNNNNN`; undefined otherwise. */
export function parseZip(value: string): Zip | undefined {
  const match = /^(\d{5})(?:-?(\d{4}))?$/.exec(value.trim());
  if (!match) return undefined;
  return match[2] === undefined ? { zip5: match[1] } : { zip5: match[1], plus4: match[2] };
}
