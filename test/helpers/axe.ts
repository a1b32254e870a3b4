// axe-core in the page under test (a devDependency, injected by evaluation): WCAG 2.2 A/AA violations.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  readonly id: string;
  readonly impact: string | null;
  readonly help: string;
  readonly nodes: { readonly target: unknown[]; readonly failureSummary?: string }[];
}

/** axe-core's WCAG 2.2 A/AA violations on the page as it is, one line each. */
export async function axeViolations(page: Page): Promise<string[]> {
  // Evaluated rather than added as a <script>: the app's Content-Security-Policy (script-src 'self') rightly
  // refuses inline scripts, and the test keeps it on.
  if (!(await page.evaluate<boolean>('typeof window.axe === "object"')))
    await page.evaluate(`${AXE_SOURCE}\n;0`);
  const violations = await page.evaluate<AxeViolation[]>(
    `axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'] } })
       .then((result) => result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help,
         nodes: v.nodes.map((n) => ({ target: n.target, failureSummary: n.failureSummary })) })))`,
  );
  return violations.flatMap((v) =>
    v.nodes.map((node) => `${v.id}: ${v.help} — ${JSON.stringify(node.target)} ${node.failureSummary ?? ''}`),
  );
}
