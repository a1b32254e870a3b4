// The status codes the offline engine gives (the spec's table is shared/api/codes.ts), by name.
export const CODE = {
  syntaxOk: 10,
  allowed: 55,
  generalSyntax: 100,
  invalidCharacter: 110,
  invalidDomain: 115,
  invalidUsername: 120,
  invalidUsernameForDomain: 125,
  tooLong: 130,
  noUsername: 140,
  noDomain: 145,
  noAtSign: 150,
  manyAtSigns: 155,
  invalidTld: 200,
  extraCharacter: 210,
  unquotedSpace: 215,
  suppressed: 255,
  unacceptedUsername: 500,
  knownBouncer: 520,
  disposable: 525,
} as const;

export type SyntaxErrorCode = (typeof CODE)[
  | 'generalSyntax'
  | 'invalidCharacter'
  | 'invalidDomain'
  | 'invalidUsername'
  | 'invalidUsernameForDomain'
  | 'tooLong'
  | 'noUsername'
  | 'noDomain'
  | 'noAtSign'
  | 'manyAtSigns'
  | 'invalidTld'
  | 'extraCharacter'
  | 'unquotedSpace'];

/** True for the codes of the syntax checks (100–215). */
export function isSyntaxError(code: number): boolean {
  return code >= CODE.generalSyntax && code <= CODE.unquotedSpace;
}
