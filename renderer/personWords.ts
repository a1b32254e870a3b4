// The E5 answer for one person in words: a summary sentence, then one line per further attribute, the
// activity metrics explained, and the postal address. Values a provider adds are shown as they come.
import type { PersonAnswer, PersonLookupInput } from '../shared/desktop/contract.js';

const DASH = '–';

/** `35-44` → `35–44`; `75k-100k` → `$75k–100k`; `1mm+` → `$1m+`. */
function band(value: string, isMoney: boolean): string {
  const words = value.replace(/mm/g, 'm').replace(/-/g, DASH);
  return isMoney ? words.replace(/(^|–)(\d)/g, '$1$$$2').replace('–$', DASH) : words;
}

const INTEREST_WORDS: Readonly<Record<string, string>> = {
  arts_and_crafts: 'arts and crafts',
  baby_product_buyer: 'baby products',
  charitable_donors: 'charitable giving',
  discount_shopper: 'discount shopping',
  health_and_wellness: 'health and wellness',
  high_end_brand_buyer: 'high-end brands',
  home_and_garden: 'home and garden',
  home_improvement: 'home improvement',
  luxury_goods: 'luxury goods',
  magazine_buyer: 'magazines',
  news_and_current_events: 'news and current events',
  outdoor_and_adventure: 'outdoors and adventure',
};

export function interestWords(name: string): string {
  return INTEREST_WORDS[name] ?? name.replace(/_/g, ' ');
}

const text = (value: string | number | undefined): string | undefined =>
  value === undefined ? undefined : String(value);

/** "Age 35–44, female, household income $75k–100k, owns the home, interests: travel, cooking." */
export function summaryOf(answer: PersonAnswer): string | null {
  const a = answer.attributes;
  const parts: string[] = [];
  const age = text(a.age);
  if (age) parts.push(`age ${band(age, false)}`);
  const gender = text(a.gender);
  if (gender) parts.push(gender.toLowerCase());
  const income = text(a.household_income);
  if (income) parts.push(`household income ${band(income, true)}`);
  const owner = text(a.home_owner_status);
  if (owner)
    parts.push(owner === 'Own' ? 'owns the home' : owner === 'Rent' ? 'rents the home' : `home: ${owner}`);
  if (answer.interests.length > 0) parts.push(`interests: ${answer.interests.map(interestWords).join(', ')}`);
  if (parts.length === 0) return null;
  const sentence = parts.join(', ');
  return `${sentence.charAt(0).toUpperCase()}${sentence.slice(1)}.`;
}

const SUMMARISED = new Set(['age', 'gender', 'household_income', 'home_owner_status']);

function attributeLine(name: string, value: string | number, all: PersonAnswer['attributes']): string | null {
  const v = String(value);
  switch (name) {
    case 'zip':
      return `Lives in ZIP code ${v}.`;
    case 'net_worth':
      return `Net worth ${band(v, true)}.`;
    case 'home_market_value':
      return `Home market value ${band(v, true)}.`;
    case 'length_of_residence':
      return `Has lived at the address: ${v.toLowerCase()}.`;
    case 'marital_status':
      return `${v}.`;
    case 'presence_of_children':
      return v === 'Yes'
        ? 'Children live in the household.'
        : v === 'No'
          ? 'No children in the household.'
          : `Children: ${v}.`;
    case 'education':
      return `Education: ${v.toLowerCase()}.`;
    case 'occupation':
      return `Occupation: ${v.toLowerCase()}.`;
    case 'rfm_offline_avg_days':
      return `Orders offline (mail, phone, in store) every ${v} days on average.`;
    case 'rfm_online_avg_days':
      return `Orders online every ${v} days on average.`;
    case 'rfm_avg_dollars':
      return `Spends $${v} per order on average.`;
    case 'rfm_last_order':
      return `Last order on ${v}.`;
    case 'life_stage_segment':
      return `Life stage: ${v}${all.life_stage_group ? ` (group “${String(all.life_stage_group)}”)` : ''}.`;
    case 'life_stage_group':
      return all.life_stage_segment ? null : `Life stage group: ${v}.`;
    case 'financial_segment':
      return `Financial behaviour: ${v}${all.financial_group ? ` (group “${String(all.financial_group)}”)` : ''}.`;
    case 'financial_group':
      return all.financial_segment ? null : `Financial group: ${v}.`;
    default:
      return `${name.replace(/_/g, ' ')}: ${v}.`;
  }
}

/** One line for each attribute the summary does not say. */
export function detailLines(answer: PersonAnswer): string[] {
  const lines: string[] = [];
  for (const [name, value] of Object.entries(answer.attributes)) {
    if (SUMMARISED.has(name)) continue;
    // The postal address below says the ZIP code already.
    if (name === 'zip' && answer.postalAddress) continue;
    const line = attributeLine(name, value, answer.attributes);
    if (line) lines.push(line);
  }
  return lines;
}

const LONGEVITY_WORDS: Readonly<Record<number, string>> = {
  0: 'no activity of this address is known',
  1: 'its first known activity was within the last month',
  2: 'its first known activity was within the last year',
  3: 'its first known activity was more than a year ago',
};

function monthWords(month: string): string {
  const match = /^(\d{4})-(\d{2})$/.exec(month);
  if (!match) return month;
  const date = new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, 1));
  return date.toLocaleDateString(undefined, { month: 'long', year: 'numeric', timeZone: 'UTC' });
}

/** The email activity metrics explained. */
export function activityLines(eam: NonNullable<PersonAnswer['eam']>): string[] {
  if (eam.dateFirstSeen === 'now' && eam.longevity === 0 && eam.velocity === 0 && eam.popularity === 0)
    return ['No email activity is recorded for this address (longevity, velocity and popularity are all 0).'];
  return [
    eam.dateFirstSeen === 'now'
      ? 'First seen: never — the address has no recorded activity.'
      : `First seen on ${eam.dateFirstSeen}.`,
    `Longevity ${eam.longevity} of 3: ${LONGEVITY_WORDS[eam.longevity] ?? 'a value this version does not know'}.`,
    `Velocity ${eam.velocity} of 10: how much activity in the last six months (0 none; each step roughly doubles, 10 is 512 events or more).`,
    `Popularity ${eam.popularity} of 10: how many distinct sources saw the address active in the last year.`,
    eam.monthLastOpen
      ? `Last opened or clicked a message in ${monthWords(eam.monthLastOpen)}.`
      : 'No open or click in the last year.',
  ];
}

/** Whom the answer is about, for its heading. */
export function queryWords(query: PersonLookupInput): string {
  if (query.by === 'email') return query.email.trim();
  if (query.by === 'hash') return `${query.hash.trim().length === 32 ? 'MD5' : 'SHA-1'} ${query.hash.trim()}`;
  const place = [query.street, query.city, query.state, query.zip]
    .map((part) => part?.trim())
    .filter(Boolean)
    .join(', ');
  return `${query.first.trim()} ${query.last.trim()}, ${place}`;
}
