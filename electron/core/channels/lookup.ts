// Lookup: one person through E5 (by address, hash, or name and postal address) on the current connection;
// and importing the people and activity files the local service answers from (issue #15).
import { basename } from 'node:path';
import { isRecordError } from '../../../shared/api/errors.js';
import type { IntelligenceResponse } from '../../../shared/api/intelligence.js';
import type { ChannelParsedInput, PersonAnswer } from '../../../shared/desktop/contract.js';
import { serviceDataDir } from '../home.js';
import { isInside, type ReferenceImports } from '../reference/import.js';
import { ReplyFailure, type CoreContext, type Handlers } from './context.js';

export type LookupChannel = 'people:lookup' | 'people:import' | 'people:import-cancel';

export function lookupHandlers(ctx: CoreContext, imports: ReferenceImports): Handlers<LookupChannel> {
  const { currentClient } = ctx.connection;

  /**
   * Imports a people or activity file into the local service's store (started if need be, so its
   * database exists and is migrated): a file staged by a browser-mode upload, or one the native dialog picked.
   */
  async function importFile(input: ChannelParsedInput<'people:import'>) {
    const file =
      input.fileId !== undefined
        ? ctx.staging.stagedOrFail(input.fileId)
        : { path: input.path!, name: basename(input.path!) };
    const embedded = await ctx.connection.ensureEmbedded();
    const dataDir = embedded.dataDir ?? serviceDataDir(ctx.home);
    return imports.run(
      input.kind,
      { path: file.path, name: file.name, isCopy: isInside(file.path, ctx.stagingDir) },
      dataDir,
      (progress) => ctx.emit('people:import-progress', progress),
    );
  }

  async function lookUpPerson(input: ChannelParsedInput<'people:lookup'>): Promise<PersonAnswer> {
    const { client, kind } = await currentClient();
    const query =
      input.by === 'email'
        ? { email: input.email }
        : input.by === 'hash'
          ? input.hash.length === 32
            ? { md5_email: input.hash.toLowerCase() }
            : { sha1_email: input.hash.toLowerCase() }
          : {
              first: input.first,
              last: input.last,
              street: input.street,
              ...(input.city ? { city: input.city } : {}),
              ...(input.state ? { state: input.state } : {}),
              ...(input.zip ? { zip: input.zip } : {}),
            };
    const result = await client.intelligence(query, { timeoutMs: 20_000 });
    if (!result.ok) {
      const error = result.error;
      if (error.kind === 'http' && error.status === 401)
        throw new ReplyFailure(
          'key-refused',
          'The service refused the API key (401): set a valid key on the Connection screen.',
        );
      if (error.kind === 'http' && error.status === 403)
        throw new ReplyFailure(
          'not-enabled',
          `This API key may not look people up (403)${error.recordError ? `: ${error.recordError.error_msg}` : '.'}`,
        );
      if (error.recordError) throw new ReplyFailure('record-error', error.recordError.error_msg);
      throw new ReplyFailure('connection-failed', `The service did not answer: ${error.message}`);
    }
    if (isRecordError(result.value)) throw new ReplyFailure('record-error', result.value.error_msg);
    return personAnswerOf(result.value, kind);
  }

  return {
    'people:lookup': lookUpPerson,
    'people:import': importFile,
    'people:import-cancel': () => ({ cancelled: imports.cancel() }),
  };
}
/** The E5 answer as the screen reads it: scalar fields by name, true interests, EAM and postal address. */
function personAnswerOf(value: IntelligenceResponse, connection: 'embedded' | 'provider'): PersonAnswer {
  const { interests, eam, postal_address: postal, ...rest } = value;
  const attributes: Record<string, string | number> = {};
  for (const [name, field] of Object.entries(rest))
    if (typeof field === 'string' || typeof field === 'number') attributes[name] = field;
  const postalAddress =
    postal && (postal.address ?? '') !== ''
      ? {
          firstName: postal.first_name ?? '',
          lastName: postal.last_name ?? '',
          address: postal.address ?? '',
          city: postal.city ?? '',
          state: postal.state ?? '',
          zip: postal.zip ?? '',
        }
      : null;
  const trueInterests = Object.entries(interests ?? {})
    .filter(([, isSeen]) => isSeen === true)
    .map(([name]) => name);
  return {
    connection,
    // An EAM key answers `eam` for everyone (the spec's defaults for an unknown address), so `{}` alone
    // does not mean "no match": a person's data, or activity ever seen, does.
    isMatch:
      Object.keys(attributes).length > 0 ||
      trueInterests.length > 0 ||
      postalAddress !== null ||
      (eam !== undefined && eam.date_first_seen !== 'now'),
    attributes,
    interests: trueInterests,
    eam: eam
      ? {
          dateFirstSeen: eam.date_first_seen,
          longevity: eam.longevity,
          velocity: eam.velocity,
          popularity: eam.popularity,
          monthLastOpen: eam.month_last_open ?? null,
        }
      : null,
    postalAddress,
  };
}
