// The names of the list services and what each needs, without zod: the renderer imports these, and
// shared/api/list.ts and listServices.ts re-export them (docs/list-services.md).
import type { ColumnKind } from '../columnKinds.js';
import type { ServiceName } from './services.js';

/** Keys of `services` in the list resource. */
export const LIST_SERVICE_KEYS = [
  'email_validation',
  'email_intelligence',
  'email_append',
  'alternate_email_append',
] as const;
export type ListServiceKey = (typeof LIST_SERVICE_KEYS)[number];

/** The key services (DESIGN.md "Conventions") each list service needs: any one of them. */
export const LIST_SERVICE_NEEDS: Readonly<Record<ListServiceKey, readonly ServiceName[]>> = {
  email_validation: ['validation'],
  email_intelligence: ['intelligence', 'eam'],
  email_append: ['email_append'],
  alternate_email_append: ['alternate_email'],
};

/** Words for a person, by list service. */
export const LIST_SERVICE_TITLES: Readonly<Record<ListServiceKey, string>> = {
  email_validation: 'Validation',
  email_intelligence: 'Email intelligence',
  email_append: 'Email append',
  alternate_email_append: 'Alternate email append',
};

/**
 * What a list service reads from a row:
 * - email_validation, alternate_email_append: the email column;
 * - email_intelligence: the email column, or an `MD5` / `SHA1` column, or a person by name and postal address;
 * - email_append: first and last name (or a full name) and a street with a ZIP or a city and state.
 * Name and postal columns are found by header name, so they need `header=true`.
 */
export const LIST_SERVICE_INPUTS: Readonly<Record<ListServiceKey, string>> = {
  email_validation: 'an email column',
  email_intelligence:
    'an email column, an MD5 or SHA1 column, or first name, last name, street and ZIP (or city and state) columns',
  email_append: 'first name, last name, street and ZIP (or city and state) columns',
  alternate_email_append: 'an email column',
};

/**
 * Whether a file (or a desktop mapping) with the columns `has` says it has gives a service what it reads, as
 * LIST_SERVICE_INPUTS says in words. The service decides with it which services run; the mapper, which are
 * missing columns.
 */
export function hasInputsFor(service: ListServiceKey, has: (kind: ColumnKind) => boolean): boolean {
  const hasName = (has('first_name') && has('last_name')) || has('full_name');
  const hasPersonAndAddress = hasName && has('street') && (has('zip') || (has('city') && has('state')));
  switch (service) {
    case 'email_validation':
    case 'alternate_email_append':
      return has('email');
    case 'email_intelligence':
      return has('email') || has('md5') || has('sha1') || hasPersonAndAddress;
    case 'email_append':
      return hasPersonAndAddress;
  }
}
