// The `mailsieve` command line: the service, its keys, and list work, on the same core as the desktop app.
import { Command, CommanderError, Option } from 'commander';
import { serviceDataDir } from './core/home.js';
import { CliError } from './cli/errors.js';
import { serve } from './cli/serve.js';
import { createKeyCommand, listKeysCommand, revokeKeyCommand } from './cli/keys.js';
import { verify } from './cli/verify.js';

const dataDirOption = () =>
  new Option('--data-dir <dir>', 'service data folder (default: the app home’s service/)').default(
    serviceDataDir(),
    '$MAILSIEVE_HOME/service',
  );

export function buildProgram(): Command {
  const program = new Command('mailsieve')
    .description('Clean email lists with the Email Data Service (embedded offline, or a provider’s).')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();

  program
    .command('serve')
    .description('Run the Email Data Service.')
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .option('--port <port>', 'port to listen on (0: any free port)', '8433')
    .addOption(dataDirOption())
    .option('--tls-self-signed', 'serve HTTPS with a freshly generated self-signed certificate')
    .option('--tls-cert <file>', 'serve HTTPS with this PEM certificate')
    .option('--tls-key <file>', 'the PEM private key of --tls-cert')
    .action(serve);

  const keys = program.command('keys').description('Manage the API keys of a local service.');
  keys
    .command('create')
    .description('Create an API key and print it (alone) on stdout.')
    .addOption(dataDirOption())
    .addOption(new Option('--mode <mode>', 'verification answer mode').default('safe_to_send'))
    .option('--corrections', 'suggest corrections for typos (email_corrections)')
    .option('--services <list>', 'comma-separated services, or all (default: validation)')
    .option('--allow <file>', 'allow list: one address or domain a line (code 55)')
    .option('--suppress <file>', 'suppression list: one address or domain a line (code 255)')
    .option('--rate-limit <n>', 'calls per second on E1–E6; 0 for none', '500')
    .option('--legacy-accept-all', 'report accept-all domains as catchall/unverifiable instead of valid')
    .option('--label <text>', 'a note to tell keys apart')
    .action(createKeyCommand);
  keys
    .command('list')
    .description('List keys (masked).')
    .addOption(dataDirOption())
    .option('--json', 'one JSON object a line')
    .action(listKeysCommand);
  keys
    .command('revoke')
    .argument('<key>', 'the key, or its #id from `keys list`')
    .description('Revoke a key.')
    .addOption(dataDirOption())
    .action((key: string, options: { dataDir: string }) => revokeKeyCommand(key.replace(/^#/, ''), options));

  program
    .command('verify')
    .description('Verify email addresses (E1), on the embedded service unless --base-url is given.')
    .argument('<email...>', 'addresses to verify')
    .option('--json', 'print each E1 response object on its own line')
    .option('--base-url <url>', 'a provider’s service instead of the embedded one')
    .option('--api-key <key>', 'the key for --base-url (or set MAILSIEVE_API_KEY)')
    .option('--timeout <seconds>', 'E1 timeout, up to 30')
    .addOption(dataDirOption())
    .action(verify);

  return program;
}

export async function main(argv: string[]): Promise<number> {
  try {
    await buildProgram().parseAsync(argv, { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode;
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`mailsieve: ${message}\n`);
    return error instanceof CliError ? error.exitCode : 1;
  }
}

const argv = process.argv.slice(2);
const exitCode = await main(argv);
// `serve` keeps running until a signal stops it; every other command ends here, even if an idle keep-alive
// socket of the HTTP client would hold the event loop open a while longer.
if (exitCode !== 0 || argv[0] !== 'serve') process.exit(exitCode);
