// The `mailsieve` command line: the service, its keys, and list work, on the same core as the desktop app.
import { formatBytes } from '../../shared/bytes.js';
import { Command, CommanderError, Option } from 'commander';
import { serviceDataDir } from '../core/home.js';
import { CliError } from './errors.js';
import { serve } from './serve.js';
import { createKeyCommand, keysUsageCommand, listKeysCommand, revokeKeyCommand } from './keys.js';
import { worker } from './worker.js';
import { addDatabaseOption, addNodeOptions, addWorkOptions, sourceAddressOption } from './teamOptions.js';
import { dnsblOption } from './selfCheck.js';
import { status } from './status.js';
import { addLogOptions } from './opsOptions.js';
import { verify } from './verify.js';
import { doctor } from './doctor.js';
import { clean, collect } from './clean.js';
import { purchase } from './purchase.js';
import { addCheckOptions, addNetworkOptions } from './onlineOptions.js';
import { registerDataCommands } from './data.js';
import { registerOutcomesCommands } from './outcomes.js';
import { DEFAULT_RETAIN_DAYS } from '../../service/lists/backend/retention.js';
import {
  DEFAULT_BOUNCE_MAX_AGE_DAYS,
  DEFAULT_MAX_BYTES_DAY,
  DEFAULT_MAX_LISTS,
  DEFAULT_MAX_UPLOADS,
} from '../../service/store/keys.js';
import { addListCheckOptions } from './checksOptions.js';
import { recheck } from './recheck.js';

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

  const serveCommand = program
    .command('serve')
    .description('Run the Email Data Service.')
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .option('--port <port>', 'port to listen on (0: any free port)', '8433')
    .addOption(dataDirOption())
    .option('--tls-self-signed', 'serve HTTPS with a freshly generated self-signed certificate')
    .option('--tls-cert <file>', 'serve HTTPS with this PEM certificate')
    .option('--tls-key <file>', 'the PEM private key of --tls-cert')
    .option(
      '--retain-days <n>',
      'days a completed list’s stored input and results are kept before they are deleted',
      String(DEFAULT_RETAIN_DAYS),
    )
    .option(
      '--allow-private-callbacks',
      'let list callbacks go to this machine or a private network (refused by default)',
    )
    .option(
      '--allow-private-mx',
      'check mailboxes at mail hosts on this machine or a private network (refused by default off loopback, or with --database or --trust-proxy)',
    )
    .option(
      '--trust-proxy <list>',
      'load balancers in front (IPs or CIDRs): a client is known by the X-Forwarded-For they send',
    )
    .option(
      '--workers <n>',
      'with --database: 1 runs a verifier node in this process, 0 serves the API only',
      '1',
    )
    .option('--metrics', 'serve Prometheus metrics at GET /metrics (off by default)')
    .option(
      '--request-timeout <s>',
      'seconds a client has to send a request’s headers, and then a body (but a list upload’s); else 408',
      '30',
    )
    .option(
      '--upload-idle-timeout <s>',
      'seconds a list upload (E7) may go without a byte of its body before it is dropped (408)',
      '60',
    )
    .option(
      '--metrics-port <n>',
      'serve the metrics (and /healthz, /readyz) on this port of their own, not beside the API (0: any free port)',
    )
    .option('--metrics-host <host>', 'the address --metrics-port binds', '127.0.0.1');
  addLogOptions(serveCommand);
  addDatabaseOption(serveCommand, 'a team server: keys, usage and lists in this PostgreSQL database');
  addNodeOptions(serveCommand);
  addWorkOptions(serveCommand).addOption(dnsblOption());
  addCheckOptions(
    serveCommand,
    'smtp',
    'highest checks level any key gets: offline, dns or smtp (each key has its own level, see keys create --checks)',
  ).action(serve);

  const workerCommand = program
    .command('worker')
    .description('Run a verifier node of a team server: it takes list work from the database’s queue.')
    .addOption(dataDirOption())
    .option(
      '--allow-private-callbacks',
      'let list callbacks go to this machine or a private network (refused by default)',
    )
    .option(
      '--allow-private-mx',
      'check mailboxes at mail hosts on this machine or a private network (refused by default)',
    )
    .option('--http-port <n>', 'serve GET /healthz, /readyz and /metrics on this port (0: any free port)')
    .option('--http-host <host>', 'the address --http-port binds', '127.0.0.1');
  addLogOptions(workerCommand);
  addDatabaseOption(workerCommand, 'the team server’s database');
  addNodeOptions(workerCommand);
  addWorkOptions(workerCommand).addOption(dnsblOption());
  addCheckOptions(
    workerCommand,
    'smtp',
    'highest checks level this node runs lists at: offline, dns or smtp (each key has its own level)',
  ).action(worker);

  addDatabaseOption(
    program
      .command('status')
      .description(
        'A team server at a glance: the nodes alive, the queue of list work, the lists in flight per key, each source address’s last hour.',
      )
      .option('--json', 'print the status as one JSON object'),
    'the team server’s database',
  ).action(status);

  const keys = program
    .command('keys')
    .description('Manage the API keys of a service: the local one, or a team server’s with --database.');
  const keyStoreOptions = (command: Command) =>
    addDatabaseOption(
      command.addOption(dataDirOption()),
      'a team server’s keys, in this PostgreSQL database',
    );
  keyStoreOptions(keys.command('create').description('Create an API key and print it (alone) on stdout.'))
    .addOption(new Option('--mode <mode>', 'verification answer mode').default('safe_to_send'))
    .option('--corrections', 'suggest corrections for typos (email_corrections)')
    .option('--services <list>', 'comma-separated services, or all (default: validation)')
    .option('--allow <file>', 'allow list: one address or domain a line (code 55)')
    .option('--suppress <file>', 'suppression list: one address or domain a line (code 255)')
    .option('--rate-limit <n>', 'calls per second on E1–E6; 0 for none', '500')
    .option('--legacy-accept-all', 'report accept-all domains as catchall/unverifiable instead of valid')
    .option('--label <text>', 'a note to tell keys apart')
    .option(
      '--fields <list>',
      'intelligence fields (and month_last_open) the key gets, comma-separated, or all (default)',
    )
    .option('--alternate-max <n>', 'alternate email matches per answer (E2), 1 to 5', '1')
    .option(
      '--bulk-limit <n>',
      'records per E6 request for an activity-metrics key (eam without intelligence), up to 10000',
    )
    .option(
      '--known-bouncers',
      'imported hard bounces (mailsieve data import bounces) answer code 520, "Matched to known bouncers"',
    )
    .option(
      '--max-lists <n>',
      `lists the key may have waiting or running at once (E7 answers 429 past it); 0 for no limit (default: ${DEFAULT_MAX_LISTS})`,
    )
    .option(
      '--max-bytes-day <n>',
      `bytes of lists the key may submit a UTC day (E7 answers 429 past it); 0 for no limit (default: ${DEFAULT_MAX_BYTES_DAY}, ${formatBytes(DEFAULT_MAX_BYTES_DAY)})`,
    )
    .option(
      '--max-uploads <n>',
      `lists the key may be uploading at once (E7 answers 429 past it, before the body); 0 for no limit (default: ${DEFAULT_MAX_UPLOADS})`,
    )
    .option(
      '--bounce-max-age-days <n>',
      `with --known-bouncers: how many days a hard bounce counts, from the day of each verification (default: ${DEFAULT_BOUNCE_MAX_AGE_DAYS})`,
    )
    .addOption(
      new Option(
        '--checks <level>',
        'how far E1 checks go: offline (syntax and lists), dns (+ mail domain), smtp (+ mailbox)',
      )
        .choices(['offline', 'dns', 'smtp'])
        .default('offline'),
    )
    .option(
      '--quota <n>',
      'billable queries allowed (E1 calls, list records, E2–E6 records answered); default: no quota',
    )
    .option('--quota-period <period>', 'the quota is per day, month or total (default total)')
    .option('--trial', 'a trial key: 100 queries in all (the spec’s limited trial)')
    .action(createKeyCommand);
  keyStoreOptions(keys.command('list').description('List keys (masked).'))
    .option('--json', 'one JSON object a line')
    .action(listKeysCommand);
  keyStoreOptions(
    keys
      .command('revoke')
      .argument('<key>', 'the key, or its #id from `keys list`')
      .description('Revoke a key.'),
  ).action((key: string, options: { dataDir: string; database?: string }) =>
    revokeKeyCommand(key.replace(/^#/, ''), options),
  );
  keyStoreOptions(
    keys.command('usage').description('Each key’s billable queries in the current period of its quota.'),
  )
    .option('--json', 'one JSON object a line')
    .action(keysUsageCommand);

  const verifyCommand = program
    .command('verify')
    .description('Verify email addresses (E1), on the embedded service unless --base-url is given.')
    .argument('<email...>', 'addresses to verify')
    .option('--json', 'print each E1 response object on its own line')
    .option('--base-url <url>', 'a provider’s service instead of the embedded one')
    .option('--api-key <key>', 'the key for --base-url (or set MAILSIEVE_API_KEY)')
    .option('--timeout <seconds>', 'E1 timeout, up to 30')
    .option('--explain', 'show how each answer was reached: DNS answers and the SMTP conversation')
    .addOption(dataDirOption());
  addCheckOptions(
    verifyCommand,
    undefined,
    'on the embedded service: offline (default), dns or smtp; with --base-url the key decides',
  ).action(verify);

  addNetworkOptions(
    program
      .command('doctor')
      .description(
        'Tell whether DNS answers, mail servers (port 25) can be reached from here, and take this machine’s HELO name and sender, for online checks; with --source-address, whether that address has reverse DNS matching the HELO name and is on DNS block lists.',
      )
      .addOption(dataDirOption())
      .option('--probe-domain <domain>', 'domain whose mail server is tried', 'gmail.com')
      .option(
        '--helo-name <name>',
        'name given in EHLO (default: this machine’s name); use one whose DNS matches your IP',
      )
      .option('--mail-from <address>', 'envelope sender of the probes (default postmaster@<helo name>)')
      .addOption(sourceAddressOption())
      .addOption(dnsblOption())
      .option('--json', 'print the result as one JSON object'),
  ).action(doctor);

  const cleanCommand = program
    .command('clean')
    .description(
      'Clean a list file (E7–E10): results and exports written beside it, on the embedded service unless --base-url is given.',
    )
    .argument('<file>', 'the list: .csv, .txt (tab-delimited), .xlsx, or .zip holding a .csv or .txt')
    .option('--email-column <n>', '1-based column of the addresses (detected when not given)')
    .option('--header', 'the first row is a header (detected when neither --header nor --no-header is given)')
    .option('--no-header', 'the first row is a record')
    .option(
      '--delimiter <c>',
      'column separator: one character, or tab, comma, semicolon, pipe (detected when not given)',
    )
    .option('--name <name>', 'the list’s name at the service (default: the file’s name)')
    .option('--out <dir>', 'folder for the results and exports (default: the file’s folder)')
    .option(
      '--export <kind>',
      'write an export: safe, invalid, clean, all, or zip (one file per status, in one .zip) (repeatable)',
      collect,
      [],
    )
    .option(
      '--dedupe',
      'remove duplicate addresses from the exports, keeping the first (default for safe and clean)',
    )
    .option('--no-dedupe', 'keep every duplicate row in the exports')
    .option('--drop-role', 'leave role addresses (info@, sales@…) out of the exports')
    .option('--drop-disposable', 'leave disposable (throw-away) addresses out of the exports')
    .option('--export-format <format>', 'csv, csv-excel (BOM and CRLF), tsv or xlsx (default csv)')
    .option(
      '--max-bounce-rate <percent>',
      'keep the expected bounce rate of the safe and clean exports under this percent (0 to 100): the rows judged safe, then accept-all and unknown rows, the least risky first',
    )
    .option('--sheet <name>', 'the sheet of an .xlsx list (default: the first visible one)')
    .option(
      '--report-csv',
      'write the match report (field,records matched,percent) and chart data (field,value,count) CSVs beside the results',
    )
    .option(
      '--services <list>',
      'list services, comma-separated: validation, intelligence, email_append, alternate_email, or all',
      'validation',
    )
    .option('--fields <list>', 'intelligence fields to return, comma-separated (default: the key’s)', collect)
    .option(
      '--report-only',
      'stop at the match reports and print the list id to buy it with: nothing is bought',
    )
    .option('--base-url <url>', 'a provider’s service instead of the embedded one')
    .option('--api-key <key>', 'the key for --base-url (or set MAILSIEVE_API_KEY)')
    .option('--json', 'print the outcome as one JSON object')
    .option('--explain', 'write what was checked and answered for each row beside the results (.explain.csv)')
    .option(
      '--no-history',
      'do not keep the run in the app home’s job history (kept by default, for `mailsieve outcomes`)',
    )
    .option(
      '--compare-with <job>',
      'compare the results with those of a job of the history (its id; MAILSIEVE_HOME): the rows whose status changed, in .changed.csv',
    )
    .addOption(dataDirOption());
  addListCheckOptions(cleanCommand).action(clean);

  addListCheckOptions(
    program
      .command('recheck')
      .description(
        'Re-check the unknown rows of a results file (or of a list, by id) at the current checks level; writes a new version beside it.',
      )
      .argument('<results>', 'a results file (.csv or .txt), or the id of a list on the service')
      .option('--out <path>', 'the new version (default: <results>-recheck.<ext>; for a list id, a folder)')
      .option('--base-url <url>', 'a provider’s service instead of the embedded one')
      .option('--api-key <key>', 'the key for --base-url (or set MAILSIEVE_API_KEY)')
      .option('--json', 'print the outcome as one JSON object')
      .addOption(dataDirOption()),
  ).action(recheck);

  program
    .command('purchase')
    .description(
      'Buy a list cleaned with --report-only (E9), wait for its results and download them (and the exports).',
    )
    .argument('<list-id>', 'the list id clean --report-only printed')
    .option(
      '--fields <list>',
      'fields to buy, comma-separated: intelligence fields, eam, postal_address, or services',
      collect,
    )
    .option(
      '--match-type <type>',
      'email append matches to buy: I (Individual only) or H (Individual and Household)',
    )
    .option('--out <dir>', 'folder for the results and exports (default: the current folder)')
    .option(
      '--export <kind>',
      'write an export: safe, invalid, clean, all, or zip (one file per status) (repeatable)',
      collect,
      [],
    )
    .option(
      '--report-csv',
      'write the match report (field,records matched,percent) and chart data (field,value,count) CSVs beside the results',
    )
    .option('--base-url <url>', 'a provider’s service instead of the embedded one')
    .option('--api-key <key>', 'the key for --base-url (or set MAILSIEVE_API_KEY)')
    .option('--json', 'print the outcome as one JSON object')
    .addOption(dataDirOption())
    .action(purchase);

  registerDataCommands(program, dataDirOption);
  registerOutcomesCommands(program, dataDirOption);

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

// No top-level await: the build bundles this as a CommonJS script (service/bundleLoader.ts says why).
const argv = process.argv.slice(2);
void main(argv).then((exitCode) => {
  // `serve` and `worker` keep running until a signal stops them; every other command ends here, even if an idle
  // keep-alive socket of the HTTP client would hold the event loop open a while longer.
  if (exitCode !== 0 || (argv[0] !== 'serve' && argv[0] !== 'worker')) process.exit(exitCode);
});
