// The list services other than validation (docs/list-services.md), row by row while the pipeline writes the
// results (pass 2): email intelligence, email append and alternate email append, answered by the same
// functions as E2–E6 (service/identity/answers.ts) on a read-only connection to the service's database in
// the pipeline worker. Each row gets its appended columns (empty when nothing was found) and counts towards
// its service's `reporting`; a report-only run counts and appends nothing.
import Database from 'better-sqlite3';
import type { PersonQuery } from '../../../shared/api/bulk.js';
import {
  EAM_UNKNOWN_ADDRESS,
  INTELLIGENCE_FIELDS,
  type EmailMatch,
} from '../../../shared/api/intelligence.js';
import {
  alternateEmailColumns,
  EMAIL_APPEND_COLUMNS,
  intelligenceColumns,
  LIST_SERVICE_INPUTS,
  LIST_SERVICE_TITLES,
} from '../../../shared/api/listServices.js';
import type { ListServiceKey } from '../../../shared/api/list.js';
import { hasInputsFor } from '../../../shared/api/listServiceNames.js';
import { columnKindOf, type ColumnKind } from '../../../shared/columns.js';
import {
  alternateEmailAnswer,
  emailAppendAnswer,
  emailForMatching,
  hasEmailRoute,
  hasPostalRoute,
  intelligenceAnswer,
  isErrorAnswer,
} from '../../identity/answers.js';
import { IdentityStore } from '../../identity/store.js';
import type { IdentityColumns, IdentityJob, IdentityListService, IdentityReportState } from '../types.js';

/** The columns of a file, by the spec's header synonyms (first of each kind), and its email column. */
export function identityColumnsOf(
  columnNames: readonly string[],
  hasHeader: boolean,
  emailColumn: number,
): IdentityColumns {
  const index = (kind: ColumnKind) =>
    hasHeader ? columnNames.findIndex((name) => columnKindOf(name) === kind) : -1;
  return {
    email: emailColumn - 1,
    md5: index('md5'),
    sha1: index('sha1'),
    first: index('first_name'),
    last: index('last_name'),
    full: index('full_name'),
    street: index('street'),
    street2: index('street2'),
    city: index('city'),
    state: index('state'),
    zip: index('zip'),
  };
}

/** The column of each kind the services read. */
const COLUMN_OF: Partial<Record<ColumnKind, keyof IdentityColumns>> = {
  email: 'email',
  md5: 'md5',
  sha1: 'sha1',
  first_name: 'first',
  last_name: 'last',
  full_name: 'full',
  street: 'street',
  city: 'city',
  state: 'state',
  zip: 'zip',
};

/** Whether the file has the columns a service reads (docs/list-services.md, "What each reads"). */
export function canRun(service: ListServiceKey, columns: IdentityColumns): boolean {
  return hasInputsFor(service, (kind) => {
    const column = COLUMN_OF[kind];
    return column !== undefined && columns[column] >= 0;
  });
}

/** Why a service named in E7's `services` cannot run on this file. */
export function cannotRunReason(service: ListServiceKey, hasHeader: boolean): string {
  return (
    `${LIST_SERVICE_TITLES[service]} needs ${LIST_SERVICE_INPUTS[service]}, and the file has none` +
    (hasHeader
      ? ' (columns are found by their header names: see the spec\'s recognised header names, e.g. "First Name", "Last Name", "Street", "City", "State", "Zip").'
      : ': submit the file with a header row naming its columns, and header=true.')
  );
}

const RANKS = ['', '2nd ', '3rd ', '4th ', '5th '];

/** The order of `email_intelligence` reporting: the spec's table order, then the sections. */
const REPORT_ORDER: readonly string[] = [...INTELLIGENCE_FIELDS, 'eam', 'postal_address'];

/** The `reporting` of each service, in the spec's shapes, from the counts of every row of the list. */
export function identityReporting(
  state: IdentityReportState,
  services: readonly IdentityListService[],
  alternateMax: number,
): Partial<Record<IdentityListService, object>> {
  const out: Partial<Record<IdentityListService, object>> = {};
  if (services.includes('email_intelligence')) {
    const matched = new Map(state.fields);
    const report: Record<string, { 'Total Count': number }> = {};
    for (const name of REPORT_ORDER)
      if (matched.has(name)) report[name] = { 'Total Count': matched.get(name)! };
    out.email_intelligence = report;
  }
  if (services.includes('email_append'))
    out.email_append = {
      email_match_type: {
        'Individual match': state.append.Individual,
        'Household match': state.append.Household,
      },
    };
  if (services.includes('alternate_email_append')) {
    const counts: Record<string, number> = {};
    state.alternate.forEach((kinds, rank) => {
      if (rank > 0 && rank >= alternateMax) return;
      counts[`${RANKS[rank]}Individual match`] = kinds.Individual;
      counts[`${RANKS[rank]}Household match`] = kinds.Household;
    });
    out.alternate_email_append = { alternate_match_type: counts };
  }
  return out;
}

/** Reads a row's fields as text: the pipeline hands a function of the column index. */
export type FieldReader = (index: number) => string;

export class IdentityPass {
  private readonly db: Database.Database;
  private readonly store: IdentityStore;
  private readonly runsIntelligence: boolean;
  private readonly runsAppend: boolean;
  private readonly runsAlternate: boolean;
  private readonly intelligenceNames: string[];
  private readonly matchedFields = new Map<string, number>();
  private readonly appendCounts = { Individual: 0, Household: 0 };
  /** Alternate matches by rank (0–4) and kind. */
  private readonly alternateCounts = Array.from({ length: 5 }, () => ({ Individual: 0, Household: 0 }));
  /** Rows done, for progress. */
  done = 0;

  constructor(
    private readonly job: IdentityJob,
    readonly services: readonly IdentityListService[],
    private readonly columns: IdentityColumns,
    private readonly delimiter: string,
    private readonly quote: (value: string, delimiter: string) => string,
  ) {
    this.db = new Database(job.dbPath, {
      readonly: true,
      fileMustExist: true,
      ...(job.nativeBinding ? { nativeBinding: job.nativeBinding } : {}),
    });
    this.db.pragma('cache_size = -131072');
    this.db.pragma('mmap_size = 2147483648');
    this.store = new IdentityStore(this.db);
    this.runsIntelligence = services.includes('email_intelligence') && job.intelligence !== undefined;
    this.runsAppend = services.includes('email_append');
    this.runsAlternate = services.includes('alternate_email_append');
    this.intelligenceNames =
      this.runsIntelligence && job.intelligence ? intelligenceColumns(job.intelligence) : [];
  }

  /** The appended column names, in order (none for a report-only run). */
  columnNames(): string[] {
    if (this.job.report) return [];
    return [
      ...this.intelligenceNames,
      ...(this.runsAppend ? EMAIL_APPEND_COLUMNS : []),
      ...(this.runsAlternate ? alternateEmailColumns(this.job.alternateMax) : []),
    ];
  }

  /** A row: its appended columns (each after the delimiter; '' for a report-only run), counted. */
  row(read: FieldReader): string {
    const c = this.columns;
    const text = (index: number) => (index >= 0 ? read(index) : '');
    const query = this.queryOf(text);
    const values: string[] = [];
    if (this.runsIntelligence) this.intelligence(query, values);
    if (this.runsAppend) this.emailAppend(query, values);
    if (this.runsAlternate) this.alternate(c.email >= 0 ? text(c.email) : '', values);
    this.done++;
    if (this.job.report) return '';
    let out = '';
    for (const value of values)
      out += this.delimiter + (value === '' ? '' : this.quote(value, this.delimiter));
    return out;
  }

  private queryOf(text: (index: number) => string): PersonQuery {
    const c = this.columns;
    let first = text(c.first);
    let last = text(c.last);
    if ((first.trim() === '' || last.trim() === '') && c.full >= 0) {
      const words = text(c.full).trim().split(/\s+/);
      if (words.length >= 2) {
        last = words.pop() ?? '';
        first = words.join(' ');
      }
    }
    const street = [text(c.street), text(c.street2)].filter((part) => part.trim() !== '').join(' ');
    const query: Record<string, string> = {};
    const put = (name: string, value: string) => {
      if (value.trim() !== '') query[name] = value;
    };
    put('email', text(c.email));
    put('md5_email', text(c.md5));
    put('sha1_email', text(c.sha1));
    put('first', first);
    put('last', last);
    put('street', street);
    put('city', text(c.city));
    put('state', text(c.state));
    put('zip', text(c.zip));
    return query;
  }

  private count(field: string): void {
    this.matchedFields.set(field, (this.matchedFields.get(field) ?? 0) + 1);
  }

  private intelligence(query: PersonQuery, values: string[]): void {
    const policy = this.job.intelligence!;
    const options = { nowS: this.job.nowS };
    let answer =
      hasEmailRoute(query) || hasPostalRoute(query)
        ? intelligenceAnswer(this.store, query, policy, options)
        : {};
    // An address with activity but no person, beside a postal address nobody lives at, keeps its activity
    // metrics; and an EAM key's rows always carry them (the spec's defaults when nothing is known).
    if (isErrorAnswer(answer) && hasEmailRoute(query) && hasPostalRoute(query)) {
      const { email, md5_email, sha1_email } = query;
      answer = intelligenceAnswer(this.store, { email, md5_email, sha1_email }, policy, options);
    }
    const result = isErrorAnswer(answer)
      ? policy.eam
        ? { eam: EAM_UNKNOWN_ADDRESS }
        : {}
      : (answer as Record<string, unknown>);
    for (const [field, value] of Object.entries(result)) {
      if (field === 'eam') {
        if ((value as { date_first_seen: string }).date_first_seen !== 'now') this.count('eam');
      } else this.count(field);
    }
    if (this.job.report) return;
    for (const name of this.intelligenceNames) {
      const dot = name.indexOf('.');
      let value: unknown;
      if (dot < 0) value = result[name];
      else {
        const section = result[name.slice(0, dot)] as Record<string, unknown> | undefined;
        value = section?.[name.slice(dot + 1)];
      }
      values.push(
        typeof value === 'string' || typeof value === 'number' || value === true ? String(value) : '',
      );
    }
  }

  private emailAppend(query: PersonQuery, values: string[]): void {
    const answer = hasPostalRoute(query) ? emailAppendAnswer(this.store, query) : {};
    const matches: EmailMatch[] =
      !isErrorAnswer(answer) && 'email_append' in answer ? (answer.email_append ?? []) : [];
    const best = matches[0];
    if (best) this.appendCounts[best.email_match_type]++;
    if (this.job.report) return;
    const bought =
      this.job.emailAppendMatchType === 'I'
        ? matches.find((match) => match.email_match_type === 'Individual')
        : best;
    values.push(bought?.email ?? '', bought?.email_match_type ?? '');
  }

  private alternate(email: string, values: string[]): void {
    let matches: EmailMatch[] = [];
    if (email.trim() !== '') {
      const found = emailForMatching(this.store, email);
      if (found.ok) {
        const answer = alternateEmailAnswer(this.store, found.match, this.job.alternateMax);
        matches = 'alternate_email' in answer ? (answer.alternate_email ?? []) : [];
      }
    }
    matches.forEach((match, rank) => {
      if (rank < 5) this.alternateCounts[rank][match.email_match_type]++;
    });
    if (this.job.report) return;
    for (let n = 0; n < this.job.alternateMax; n++)
      values.push(matches[n]?.email ?? '', matches[n]?.email_match_type ?? '');
  }

  /** The counts behind `reporting`, as plain data (a part's, summed when its list is complete). */
  toState(): IdentityReportState {
    return {
      fields: [...this.matchedFields],
      append: { ...this.appendCounts },
      alternate: this.alternateCounts.map((kinds) => ({ ...kinds })),
    };
  }

  /** Adds the counts of another pass over the same list (a part's). */
  addState(state: IdentityReportState): void {
    for (const [field, count] of state.fields)
      this.matchedFields.set(field, (this.matchedFields.get(field) ?? 0) + count);
    this.appendCounts.Individual += state.append.Individual;
    this.appendCounts.Household += state.append.Household;
    state.alternate.forEach((kinds, rank) => {
      const mine = this.alternateCounts[rank];
      if (!mine) return;
      mine.Individual += kinds.Individual;
      mine.Household += kinds.Household;
    });
  }

  /** The `reporting` of each service, in the spec's shapes. */
  reporting(): Partial<Record<IdentityListService, object>> {
    return identityReporting(this.toState(), this.services, this.job.alternateMax);
  }

  close(): void {
    this.db.close();
  }
}
