/** A failure the CLI reports as one line and a non-zero exit, never a stack trace. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** Parses a whole number option within bounds, or throws a CliError naming the option. */
export function intOption(name: string, raw: string, min: number, max: number): number {
  const value = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(value) || value < min || value > max)
    throw new CliError(`${name} takes a whole number from ${min} to ${max}; got '${raw}'.`);
  return value;
}

/**
 * Writes to standard output and waits until it is handed on: `main` ends the process with process.exit, which
 * would cut a long output to a pipe short (writes to a pipe are asynchronous).
 */
export function writeStdout(text: string): Promise<void> {
  return new Promise((resolve, reject) =>
    process.stdout.write(text, (error) => (error ? reject(error) : resolve())),
  );
}
