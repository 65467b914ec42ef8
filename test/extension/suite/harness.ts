/**
 * A tiny describe/it runner for the suite inside the extension host. node:test cannot be used there:
 * the host runs on Node 20 (code-server 4.100.3), whose run() always spawns a child process per file
 * (`isolation: 'none'` arrived in Node 22.8), and a child has no `vscode` module. Tests run in order,
 * hooks run once per describe, and run() rejects when anything failed. BATON_TEST_GREP (runTest.ts
 * passes it on) runs only the describe groups whose name contains it, e.g. `workbench UI` to remake
 * docs/vscode.png without the rest; unset, every group runs.
 */

type Fn = () => unknown;

interface Case {
	name: string;
	fn: Fn;
	timeoutMs: number;
}

interface Group {
	name: string;
	before: Fn[];
	after: Fn[];
	cases: Case[];
}

const groups: Group[] = [];
let current: Group | undefined;

export function describe(name: string, body: () => void): void {
	const group: Group = { name, before: [], after: [], cases: [] };
	groups.push(group);
	const outer = current;
	current = group;
	try {
		body();
	} finally {
		current = outer;
	}
}

function group(): Group {
	if (!current) {
		throw new Error('it/before/after must be called inside describe()');
	}
	return current;
}

export function it(name: string, fn: Fn, timeoutMs = 30_000): void {
	group().cases.push({ name, fn, timeoutMs });
}

export function before(fn: Fn): void {
	group().before.push(fn);
}

export function after(fn: Fn): void {
	group().after.push(fn);
}

async function withTimeout(fn: Fn, ms: number, label: string): Promise<void> {
	let timer: ReturnType<typeof setTimeout> | undefined;
	try {
		await Promise.race([
			Promise.resolve().then(fn),
			new Promise((_resolve, reject) => {
				timer = setTimeout(() => reject(new Error(`${label} timed out after ${ms} ms`)), ms);
			}),
		]);
	} finally {
		clearTimeout(timer);
	}
}

export interface RunSummary {
	passed: number;
	failed: number;
	durationMs: number;
}

/** Runs every registered group in order; a failed `before` fails (and skips) its group's cases. */
export async function runAll(log: (line: string) => void = console.log): Promise<RunSummary> {
	const started = Date.now();
	let passed = 0;
	let failed = 0;
	const grep = process.env.BATON_TEST_GREP ?? '';
	const chosen = groups.filter(g => g.name.toLowerCase().includes(grep.toLowerCase()));
	if (chosen.length === 0) {
		throw new Error(`BATON_TEST_GREP="${grep}" matches no describe group: ${groups.map(g => g.name).join(', ')}`);
	}
	for (const g of chosen) {
		log(`# ${g.name}`);
		let setupError: unknown;
		for (const fn of g.before) {
			try {
				await withTimeout(fn, 120_000, `before hook of "${g.name}"`);
			} catch (e) {
				setupError = e;
				break;
			}
		}
		for (const c of g.cases) {
			const t0 = Date.now();
			try {
				if (setupError !== undefined) {
					throw setupError instanceof Error
						? setupError
						: new Error(`before hook failed: ${JSON.stringify(setupError)}`);
				}
				await withTimeout(c.fn, c.timeoutMs, `"${c.name}"`);
				passed++;
				log(`ok - ${c.name} (${Date.now() - t0} ms)`);
			} catch (e) {
				failed++;
				log(`not ok - ${c.name} (${Date.now() - t0} ms)\n${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
			}
		}
		for (const fn of g.after) {
			try {
				await withTimeout(fn, 60_000, `after hook of "${g.name}"`);
			} catch (e) {
				failed++;
				log(`not ok - after hook of "${g.name}"\n${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
			}
		}
	}
	const summary = { passed, failed, durationMs: Date.now() - started };
	log(`# pass ${passed}\n# fail ${failed}\n# duration_ms ${summary.durationMs}`);
	return summary;
}

/** A suite entry's run(), for VS Code's extension host: rejects when any case failed. */
export async function run(): Promise<void> {
	const summary = await runAll();
	if (summary.failed > 0) {
		throw new Error(`${summary.failed} extension test(s) failed`);
	}
}
