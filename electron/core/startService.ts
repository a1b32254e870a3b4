// `npm start` until the desktop UI exists: the embedded service in the foreground, with its key provisioned.
import { serviceDataDir } from './home.js';
import { startEmbeddedService } from './embedded.js';

const dataDir = serviceDataDir();
const embedded = await startEmbeddedService(dataDir);
process.stdout.write(
  [
    'Mailsieve: the desktop UI is not part of this build yet; started the embedded Email Data Service instead.',
    `  service:  ${embedded.baseUrl}  (offline checks; data in ${dataDir})`,
    `  key file: ${dataDir}/embedded.key  (readable only by you)`,
    '  try:      npx mailsieve verify jane.doe@gmial.com',
    'Press Ctrl+C to stop.',
    '',
  ].join('\n'),
);
const stop = () => {
  embedded.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
