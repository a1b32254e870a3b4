// The verifier's identity as mail servers first judge it, before any mailbox: a HELO name must be a
// fully-qualified name the internet knows (Postfix's reject_non_fqdn_helo_hostname and the like), the sender's
// domain fully-qualified. Pure, so the app's Connection screen asks for both as the engine judges them.

const FQDN = /^(?=.{4,253}$)([a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z](?:[a-z0-9-]*[a-z0-9])?$/i;
const NOT_PUBLIC = /(^|\.)(localhost|localdomain|local|lan|home|internal)$/i;

/** Why a HELO name is not a fully-qualified public host name, or undefined when it is one (or an [IP]). */
export function heloNameProblem(name: string): string | undefined {
  if (/^\[[0-9a-f:.]+\]$/i.test(name)) return undefined;
  if (!FQDN.test(name)) return 'it is not a fully-qualified domain name';
  if (NOT_PUBLIC.test(name)) return 'it is a local name, not one the internet knows';
  return undefined;
}

/** Why a sender address's domain cannot pass a server's sender checks on its face, or undefined. */
export function senderDomainProblem(mailFrom: string): string | undefined {
  const domain = mailFrom.slice(mailFrom.lastIndexOf('@') + 1);
  if (!FQDN.test(domain)) return 'its domain is not fully-qualified';
  if (NOT_PUBLIC.test(domain)) return 'its domain is a local name, not one the internet knows';
  return undefined;
}
