/**
 * Extension activation (issue: ≤ 50 ms of its own code, hub start excluded), measured in a real VS
 * Code (code-server) with a fresh extension host per sample: the time inside activate(), the time of
 * ext.activate() including loading dist/extension.js, and, as context, the time until the hub
 * connection is live (first sample spawns the hub; later ones may find it still running).
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { ActivationSample } from '../extension/suite/activationBench';
import { repoRoot, runInVsCode } from '../extension/vscodeRun';
import { Reporter, median, row } from './report';

const quick = process.argv.includes('--quick');
const samples = quick ? 2 : 5;

async function main(): Promise<void> {
	const reporter = new Reporter('activation');
	const out = mkdtempSync('/tmp/bt-bench-');
	const results: ActivationSample[] = [];
	try {
		for (let i = 0; i < samples; i++) {
			const file = join(out, `sample-${i}.json`);
			const code = await runInVsCode({
				suite: join(repoRoot, 'test/extension/suite/activationBench.ts'),
				env: { BATON_BENCH_OUT: file },
			});
			if (code !== 0) {
				throw new Error(`activation sample ${i + 1} failed with exit code ${code}`);
			}
			const sample = JSON.parse(readFileSync(file, 'utf8')) as ActivationSample;
			console.log(
				`  sample ${i + 1}/${samples}: module evaluation ${sample.moduleLoadMs.toFixed(1)} ms + activate() ${sample.activateMs.toFixed(1)} ms (CPU ${sample.cpuMs.toFixed(1)} ms); ext.activate() ${sample.loadAndActivateMs.toFixed(1)} ms; connected after ${sample.connectedMs.toFixed(0)} ms`,
			);
			results.push(sample);
		}
	} finally {
		rmSync(out, { recursive: true, force: true });
	}
	const note = `median of ${samples} fresh extension hosts in code-server 4.100.3`;
	reporter.add(
		row(
			'activation, extension’s own code (module evaluation + activate())',
			median(results.map(r => r.moduleLoadMs + r.activateMs)),
			'ms',
			{ max: 50 },
			`${note}; hub start excluded (activation does not wait for it)`,
		),
	);
	reporter.add(
		row(
			'activation CPU time, extension’s own code',
			median(results.map(r => r.cpuMs)),
			'ms',
			{ max: 50 },
			'process.cpuUsage over the same span: robust to a busy machine',
		),
	);
	reporter.add(row('of which activate()', median(results.map(r => r.activateMs)), 'ms', undefined, note));
	reporter.add(row('of which module evaluation', median(results.map(r => r.moduleLoadMs)), 'ms', undefined, note));
	reporter.add(
		row(
			'ext.activate() as VS Code reports it',
			median(results.map(r => r.loadAndActivateMs)),
			'ms',
			undefined,
			'context: adds the editor’s own activation work and V8 compiling the bundle',
		),
	);
	reporter.add(
		row(
			'activation to live hub connection',
			median(results.map(r => r.connectedMs)),
			'ms',
			undefined,
			'context: includes spawning the hub on a cold data dir',
		),
	);
	reporter.add(
		row('dist/extension.js size', statSync(join(repoRoot, 'dist/extension.js')).size / 1024, 'KB', { max: 560 }),
	);
	reporter.finish();
}

main().catch((e: unknown) => {
	console.error(e);
	process.exit(1);
});
