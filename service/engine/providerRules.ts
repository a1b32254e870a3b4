// Code 125, "Invalid username syntax for that domain": the username rules of a few big providers, as their
// own sign-up pages state them. Only rules that hold for every mailbox a provider has are applied; an
// address breaking one cannot exist there. What follows a "+" (Gmail and Microsoft tags) or, at Yahoo, a
// "-" (disposable-address keywords) is not part of the username and is not judged.

/**
 * Gmail: "Usernames can be between 6 and 30 characters long" and "can contain letters (a-z), numbers (0-9),
 * and periods (.)". Gmail ignores periods, so they do not count towards the length.
 */
const GMAIL: ReadonlySet<string> = new Set(['gmail.com', 'googlemail.com']);

/**
 * Yahoo: a Yahoo ID must "start with a letter" and has "letters, numbers, underscores and one dot", at most
 * 32 characters. (The 4-character minimum is not applied: older IDs are shorter.) Disposable addresses
 * add "-keyword". Yahoo Japan (yahoo.co.jp) is another company with other rules and is not listed.
 */
const YAHOO: ReadonlySet<string> = new Set([
  'yahoo.com',
  'yahoo.ca',
  'yahoo.co.in',
  'yahoo.co.uk',
  'yahoo.com.au',
  'yahoo.com.br',
  'yahoo.com.mx',
  'yahoo.de',
  'yahoo.es',
  'yahoo.fr',
  'yahoo.ie',
  'yahoo.it',
  'ymail.com',
  'rocketmail.com',
]);

/**
 * Microsoft (Outlook.com, Hotmail, Live, MSN): a username may use "only letters, numbers, periods (.),
 * underscores (_), and hyphens (-)".
 */
const MICROSOFT: ReadonlySet<string> = new Set([
  'outlook.com',
  'outlook.de',
  'outlook.es',
  'outlook.fr',
  'outlook.it',
  'hotmail.com',
  'hotmail.co.uk',
  'hotmail.de',
  'hotmail.es',
  'hotmail.fr',
  'hotmail.it',
  'live.com',
  'live.co.uk',
  'live.de',
  'live.fr',
  'live.it',
  'msn.com',
  'passport.com',
  'windowslive.com',
]);

// Local parts are compared case-insensitively in ASCII only: a non-ASCII letter is never a Latin one here
// (String#toLowerCase would turn the Kelvin sign into "k").
const lower = (c: number): number => (c >= 65 && c <= 90 ? c + 32 : c);
const isLower = (c: number): boolean => c >= 97 && c <= 122;
const isDigit = (c: number): boolean => c >= 48 && c <= 57;

function gmailUsernameOk(local: string): boolean {
  let counted = 0;
  for (let i = 0; i < local.length; i++) {
    const c = lower(local.charCodeAt(i));
    if (c === 43 /* + */) break;
    if (isLower(c) || isDigit(c)) counted++;
    else if (c !== 46 /* . */) return false;
  }
  return counted >= 6 && counted <= 30;
}

function yahooUsernameOk(local: string): boolean {
  if (!isLower(lower(local.charCodeAt(0)))) return false;
  let length = 0;
  for (; length < local.length; length++) {
    const c = lower(local.charCodeAt(length));
    if (c === 45 /* - */ || c === 43 /* + */) break;
    if (!(isLower(c) || isDigit(c) || c === 46 /* . */ || c === 95) /* _ */) return false;
  }
  return length <= 32;
}

function microsoftUsernameOk(local: string): boolean {
  for (let i = 0; i < local.length; i++) {
    const c = lower(local.charCodeAt(i));
    if (c === 43 /* + */) break;
    if (!(isLower(c) || isDigit(c) || c === 46 /* . */ || c === 95 /* _ */ || c === 45) /* - */) return false;
  }
  return true;
}

/**
 * True when the provider of `domain` (lower-case, ASCII form) has no mailbox by this username.
 * `local` is the local part as written; rules compare it case-insensitively.
 */
export function breaksProviderRules(local: string, domain: string): boolean {
  if (GMAIL.has(domain)) return !gmailUsernameOk(local);
  if (YAHOO.has(domain)) return !yahooUsernameOk(local);
  if (MICROSOFT.has(domain)) return !microsoftUsernameOk(local);
  return false;
}
