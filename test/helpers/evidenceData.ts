// A realistic evidence file of N rows (issue 37, "Evidence of every verdict"), for the outcomes bench (`npm run
// bench -- outcomes` prints its size per row) and the evidence tests: the rows of a list checked online (SMTP)
// as the service writes them (service/lists/pipeline/partWriter.ts explainLine: the same columns, the same
// whys), kept as the desktop keeps a job's evidence (electron/core/results/evidence.ts keepEvidence: blocked
// gzip). The mix is a B2B list's: mostly valid and accept-all mailboxes at the big providers and at companies
// of their own, some refused mailboxes, a few unknowns, dead domains and rows decided offline. Deterministic:
// the same N gives the same bytes (but for the times, which start at `startAt`).
import { explainLine, EXPLAIN_HEADER, type ExplainedRow } from '../../service/lists/pipeline/partWriter.js';
import { keepEvidence } from '../../electron/core/results/evidence.js';
import { evidenceTime as time } from '../../shared/outcomes.js';

const FIRST = (
  'james mary john patricia robert jennifer michael linda william elizabeth david barbara richard susan joseph ' +
  'jessica thomas sarah charles karen christopher lisa daniel nancy matthew betty anthony margaret mark sandra ' +
  'donald ashley steven kimberly paul emily andrew donna joshua michelle kenneth carol kevin amanda brian ' +
  'dorothy george melissa timothy deborah ronald stephanie edward rebecca jason sharon jeffrey laura ryan ' +
  'cynthia jacob kathleen gary amy nicholas angela eric shirley jonathan anna stephen brenda larry pamela justin ' +
  'emma scott nicole brandon helen benjamin samantha samuel katherine gregory christine alexander debra frank ' +
  'rachel patrick carolyn raymond janet jack catherine dennis maria jerry heather tyler diane aaron ruth jose ' +
  'julie adam olivia nathan joyce henry virginia douglas victoria zachary kelly peter lauren kyle christina'
).split(' ');
const LAST = (
  'smith johnson williams brown jones garcia miller davis rodriguez martinez hernandez lopez gonzalez wilson ' +
  'anderson thomas taylor moore jackson martin lee perez thompson white harris sanchez clark ramirez lewis ' +
  'robinson walker young allen king wright scott torres nguyen hill flores green adams nelson baker hall ' +
  'rivera campbell mitchell carter roberts gomez phillips evans turner diaz parker cruz edwards collins reyes ' +
  'stewart morris morales murphy cook rogers gutierrez ortiz morgan cooper peterson bailey reed kelly howard ' +
  'ramos kim cox ward richardson watson brooks chavez wood james bennett gray mendoza ruiz hughes price alvarez ' +
  'castillo sanders patel myers long ross foster jimenez powell jenkins perry russell sullivan bell coleman'
).split(' ');
const WORDS = (
  'acme north south east west blue green red summit river lake harbor valley peak global united first prime ' +
  'alpha delta omega apex core metro urban rural coastal pacific atlantic central capital pioneer liberty ' +
  'eagle falcon cedar maple oak pine stone iron silver golden bright clear swift solid'
).split(' ');
const KINDS = 'group labs systems partners health logistics media capital foods energy legal design'.split(
  ' ',
);
const TLDS = ['com', 'com', 'com', 'net', 'org', 'io', 'co.uk', 'de', 'fr', 'ca'];

/** A small deterministic generator (a linear congruential one): the same file for the same N. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 4294967296;
  };
}

interface Provider {
  readonly domain: string;
  readonly mx: string;
  /** The mailbox's 250 and a refusal, as that provider words them. */
  readonly accepted: string;
  readonly refused: string;
}

const PROVIDERS: readonly (readonly [Provider, number])[] = [
  [
    {
      domain: 'gmail.com',
      mx: 'gmail-smtp-in.l.google.com',
      accepted: '250 2.1.5 OK',
      refused:
        "550 5.1.1 The email account that you tried to reach does not exist. Please try double-checking the recipient's email address for typos or unnecessary spaces. For more information, go to https://support.google.com/mail/?p=NoSuchUser",
    },
    0.22,
  ],
  [
    {
      domain: 'outlook.com',
      mx: 'outlook-com.olc.protection.outlook.com',
      accepted: '250 2.1.5 Recipient OK',
      refused:
        '550 5.5.0 Requested action not taken: mailbox unavailable. [DB5EUR03FT012.eop-EUR03.prod.protection.outlook.com]',
    },
    0.08,
  ],
  [
    {
      domain: 'yahoo.com',
      mx: 'mta7.am0.yahoodns.net',
      accepted: '250 recipient <ok>',
      refused: "554 delivery error: dd This user doesn't have a yahoo.com account",
    },
    0.05,
  ],
  [
    {
      domain: 'hotmail.com',
      mx: 'hotmail-com.olc.protection.outlook.com',
      accepted: '250 2.1.5 Recipient OK',
      refused: '550 5.5.0 Requested action not taken: mailbox unavailable.',
    },
    0.04,
  ],
  [
    {
      domain: 'icloud.com',
      mx: 'mx01.mail.icloud.com',
      accepted: '250 2.1.5 Ok',
      refused: '550 5.1.1 <user@icloud.com>: user does not exist',
    },
    0.02,
  ],
];

/** A company's domain and its mail host: its own, or a hosted one (Google, Microsoft, a gateway). */
function company(next: () => number, index: number): Provider {
  const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)];
  const domain = `${pick(WORDS)}${pick(KINDS)}${index % 97}.${pick(TLDS)}`;
  const host = next();
  const stem = domain.replaceAll('.', '-');
  if (host < 0.35)
    return {
      domain,
      mx: `${stem}.mail.protection.outlook.com`,
      accepted: '250 2.1.5 Recipient OK',
      refused: '550 5.4.1 Recipient address rejected: Access denied. AS(201806281)',
    };
  if (host < 0.6)
    return {
      domain,
      mx: 'aspmx.l.google.com',
      accepted: '250 2.1.5 OK',
      refused: '550 5.1.1 The email account that you tried to reach does not exist.',
    };
  if (host < 0.7)
    return {
      domain,
      mx: `mxa-00${100000 + (index % 899999)}.gslb.pphosted.com`,
      accepted: '250 2.1.5 Ok',
      refused: '550 5.1.1 User Unknown',
    };
  return {
    domain,
    mx: `mx${1 + (index % 2)}.${domain}`,
    accepted: '250 2.1.5 Ok',
    refused: `550 5.1.1 <someone@${domain}>: Recipient address rejected: User unknown in virtual mailbox table`,
  };
}

/** The explain CSV of `rows` rows (header first), as the service writes it, a chunk at a time. */
export function* syntheticExplain(
  rows: number,
  startAt = Date.parse('2026-11-12T09:00:00Z'),
): Generator<Buffer> {
  const next = random(37);
  const companies = Array.from({ length: 20_000 }, (_, i) => company(next, i));
  let at = startAt;
  yield Buffer.from(EXPLAIN_HEADER);
  let chunk = '';
  for (let row = 1; row <= rows; row++) {
    const first = FIRST[Math.floor(next() * FIRST.length)];
    const last = LAST[Math.floor(next() * LAST.length)];
    const shape = next();
    const local =
      shape < 0.45
        ? `${first}.${last}`
        : shape < 0.65
          ? `${first[0]}${last}`
          : shape < 0.8
            ? `${first}${last}${Math.floor(next() * 100)}`
            : shape < 0.9
              ? `${first}_${last}${Math.floor(next() * 10)}`
              : `${first}`;
    let provider: Provider | undefined;
    let draw = next();
    for (const [candidate, share] of PROVIDERS) {
      if (draw < share) {
        provider = candidate;
        break;
      }
      draw -= share;
    }
    provider ??= companies[Math.floor(next() * companies.length)];
    const email = `${local}@${provider.domain}`;
    // A list checks about ten addresses a second: each row a little later than the one before.
    at += Math.floor(next() * 200);
    const verdict = next();
    const smtp = (code: number, why: string, reply: string): [number, ExplainedRow] => [
      code,
      {
        email,
        checked: 'smtp',
        why,
        host: provider.mx,
        reply,
        source: 'default route',
        checkedAt: time(at),
      },
    ];
    const dns = (code: number, why: string, reply: string): [number, ExplainedRow] => [
      code,
      {
        email,
        checked: 'dns',
        why,
        host: provider.domain,
        reply,
        source: 'default route',
        checkedAt: time(at),
      },
    ];
    const [code, explained]: [number, ExplainedRow | undefined] =
      verdict < 0.55
        ? smtp(
            50,
            `${provider.mx}: the mailbox was accepted; the domain refuses unknown addresses (a random one was refused)`,
            provider.accepted,
          )
        : verdict < 0.7
          ? smtp(
              45,
              `${provider.mx}: the mailbox was accepted; the domain accepts any address (a random one was accepted)`,
              provider.accepted,
            )
          : verdict < 0.78
            ? smtp(400, `${provider.mx}: ${provider.refused}`, provider.refused)
            : verdict < 0.83
              ? smtp(
                  5,
                  `${provider.mx} answered 451 4.7.1 Greylisted, please try again later — a temporary refusal (greylisting?) — still temporary after 2 retries`,
                  '451 4.7.1 Greylisted, please try again later',
                )
              : verdict < 0.85
                ? dns(310, `DNS: ${provider.domain} does not exist (NXDOMAIN)`, 'NXDOMAIN')
                : verdict < 0.86
                  ? dns(
                      325,
                      `DNS: ${provider.domain} has a null MX (MX 0 .): the domain takes no mail`,
                      'null MX',
                    )
                  : verdict < 0.91
                    ? [500, undefined]
                    : verdict < 0.93
                      ? [520, undefined]
                      : verdict < 0.96
                        ? [150, undefined]
                        : [10, undefined];
    chunk += explainLine(row, email, code, explained, time(at));
    if (chunk.length >= 1 << 20) {
      yield Buffer.from(chunk);
      chunk = '';
    }
  }
  if (chunk !== '') yield Buffer.from(chunk);
}

export interface SyntheticEvidence {
  readonly rows: number;
  /** The explain CSV as the service sends it. */
  readonly csvBytes: number;
  /** The evidence file as the desktop keeps it. */
  readonly keptBytes: number;
}

/**
 * Writes a realistic evidence file of `rows` rows at `path` as the desktop keeps a job's (explain.csv.gz):
 * its size, and the size of the CSV it was made from.
 */
export async function writeSyntheticEvidence(path: string, rows: number): Promise<SyntheticEvidence> {
  let csvBytes = 0;
  const counted = function* () {
    for (const chunk of syntheticExplain(rows)) {
      csvBytes += chunk.length;
      yield chunk;
    }
  };
  const keptBytes = await keepEvidence(counted(), path);
  return { rows, csvBytes, keptBytes };
}
