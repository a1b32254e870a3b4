// The hostile list of issue 36's first point, and what a node pays for it: a zip holding one CSV line of
// 8 MiB (about 8 KB on the wire), the CPU a process has spent (this one, or a node's by /proc), and E1's
// latency for another key while the node takes such lists.
import { readFileSync } from 'node:fs';
import { zipSync } from 'fflate';

/** A zip of one line of `bytes` bytes ('a' repeated, no line break): 8 MiB zip to about 8 KB. */
export function oneLineZip(bytes = 8 * 1024 * 1024): Uint8Array {
  return zipSync({ 'list.csv': new Uint8Array(Buffer.alloc(bytes, 'a')) }, { level: 9 });
}

/** CPU milliseconds (user and system, all threads) a process has used: this one, or another by /proc. */
export function cpuMs(pid?: number): number {
  if (pid === undefined) {
    const usage = process.cpuUsage();
    return (usage.user + usage.system) / 1000;
  }
  // /proc/<pid>/stat: fields 14 and 15 (utime, stime) in clock ticks (100 a second), after the `(comm)` one.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * E1 for `key` at a steady pace (a request every `everyMs`, or as soon as the one before has answered when
 * it took longer), until `work` settles: each request's milliseconds.
 */
export async function e1LatenciesWhile(
  base: string,
  key: string,
  work: Promise<unknown>,
  everyMs = 10,
): Promise<number[]> {
  let isDone = false;
  const settled = work.finally(() => (isDone = true));
  // (Awaited below; when a request fails first, its failure is the one to report.)
  settled.catch(() => undefined);
  const latencies: number[] = [];
  while (!isDone) {
    const started = performance.now();
    const response = await fetch(`${base}/v5/ev?api_key=${encodeURIComponent(key)}&email=jane%40example.com`);
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`E1 answered ${response.status}`);
    const took = performance.now() - started;
    latencies.push(took);
    if (took < everyMs) await new Promise((resolve) => setTimeout(resolve, everyMs - took));
  }
  await settled;
  return latencies;
}

export function p99(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)];
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[sorted.length >> 1];
}

/**
 * E1's p99 for `key`, at a steady pace, while `burst` runs (again, until ten requests are measured), in rounds
 * until one is under `target` ms (at most three): other programs on a shared machine only ever add to E1's latency, so the best round is the node's
 * own. The best p99, and each round's p99 and number of requests in words (for a failure's message).
 */
export async function bestE1P99During(
  base: string,
  key: string,
  burst: () => Promise<unknown>,
  target = 50,
): Promise<{ best: number; rounds: string }> {
  const rounds: { p99: number; requests: number }[] = [];
  while (rounds.length < 3 && !rounds.some((round) => round.p99 < target)) {
    // (A first request opens the connection.)
    await e1LatenciesWhile(base, key, Promise.resolve());
    // A burst the node takes in a tenth of a second sees a handful of requests (a faster machine, fewer): it
    // is sent again, within the round, until ten E1 requests have been answered during bursts.
    const latencies: number[] = [];
    for (let bursts = 0; latencies.length < 10 && bursts < 10; bursts++)
      latencies.push(...(await e1LatenciesWhile(base, key, burst(), 5)));
    if (latencies.length < 10) throw new Error(`only ${latencies.length} E1 requests during ten bursts`);
    rounds.push({ p99: p99(latencies), requests: latencies.length });
  }
  return {
    best: Math.min(...rounds.map((round) => round.p99)),
    rounds: rounds.map((round) => `${Math.round(round.p99)} ms of ${round.requests} requests`).join(', '),
  };
}
