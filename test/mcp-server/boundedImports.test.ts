/**
 * Bounded reads through the real CLI: imports, plan, body and secret files, restore and
 * stdin refuse devices and FIFOs at once (stat().size is 0 for them, so these read without end or hung
 * for ever before), a Backlog.md task that a symlink leads out of the project is skipped and listed,
 * never read into a card; each bad input is one clear error in under 5 s and nothing is imported.
 * The CLI runs in process (runCliHere) where a file is named by path: the refusal, its words, exit
 * code and time are the CLI's own. It runs as a child (runBaton) where the child is the point: stdin
 * (a device or a pipe), a FIFO (a regression would block the reading process in open(), which only a
 * child's timeout can end), and export, which writes to process.stdout itself.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { closeSync, cpSync, mkdirSync, mkdtempSync, openSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import {
	type CliResult,
	batonJs,
	childEnv,
	cleanupDataDir,
	ensureBuilt,
	neutralCwd,
	runBaton,
	runCliHere,
	tempDataDir,
} from '../helpers/mcp';

const fixtures = join(__dirname, '..', 'fixtures', 'import');

/** `baton ...args` with its stdin read from `stdinPath` (a device such as /dev/zero). */
function runWithStdin(args: string[], dataDir: string, stdinPath: string): Promise<CliResult> {
	const fd = openSync(stdinPath, 'r');
	return new Promise((resolve, reject) => {
		const child = spawn(process.execPath, [batonJs, ...args], {
			env: childEnv(dataDir),
			cwd: neutralCwd,
			stdio: [fd, 'pipe', 'pipe'],
		});
		closeSync(fd);
		let stdout = '';
		let stderr = '';
		child.stdout?.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
		child.stderr?.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
		const timer = setTimeout(() => {
			child.kill('SIGKILL');
			reject(new Error(`baton ${args.join(' ')} did not finish in 30 s`));
		}, 30_000);
		child.on('error', reject);
		child.on('close', code => {
			clearTimeout(timer);
			resolve({ code, stdout, stderr });
		});
	});
}

describe('files a user names are read with a bound', () => {
	let dataDir: string;
	let scratch: string;

	before(async () => {
		ensureBuilt();
		dataDir = tempDataDir();
		scratch = mkdtempSync('/tmp/bt-bounded-');
		// A running hub, so the timings below are the CLI's alone.
		const r = await runCliHere(['stats'], { dataDir });
		assert.equal(r.code, 0, r.stderr);
	});
	after(async () => {
		await cleanupDataDir(dataDir);
		rmSync(scratch, { recursive: true, force: true });
	});

	const cardCount = async (): Promise<number> => {
		const r = await runCliHere(['stats', '--json'], { dataDir });
		return (JSON.parse(r.stdout) as { total: number }).total;
	};

	/** One line on stderr naming the problem, exit 1, within 5 s, nothing imported. */
	async function refusedFast(run: () => Promise<CliResult>, message: RegExp): Promise<void> {
		const before = await cardCount();
		const started = Date.now();
		const r = await run();
		const took = Date.now() - started;
		assert.equal(r.code, 1, `expected a refusal: ${r.stdout}${r.stderr}`);
		const lines = r.stderr.trim().split('\n');
		assert.equal(lines.length, 1, r.stderr);
		assert.match(lines[0] ?? '', message);
		assert.ok(took < 5_000, `refused after ${took} ms`);
		assert.equal(await cardCount(), before, 'nothing was imported');
	}

	it('skips a Backlog.md task that is a symlink to /dev/zero, saying so', async () => {
		const project = join(scratch, 'zero');
		mkdirSync(join(project, 'backlog', 'tasks'), { recursive: true });
		symlinkSync('/dev/zero', join(project, 'backlog', 'tasks', 'task-1 - z.md'));
		const started = Date.now();
		const r = await runCliHere(['import', '--from', 'backlog-md', project], { dataDir });
		assert.equal(r.code, 0, r.stderr);
		assert.ok(Date.now() - started < 5_000, `answered after ${Date.now() - started} ms`);
		assert.match(r.stdout, /Skipped: .*task-1 - z\.md \(task-1 - z\.md\): a symlink out of .*backlog; not followed/);
	});

	it('never reads a task file a symlink leads out of the project into a card', async () => {
		const project = join(scratch, 'leak');
		cpSync(join(fixtures, 'backlog-md'), project, { recursive: true });
		const secret = join(scratch, 'secret.md');
		writeFileSync(secret, '---\nid: task-9\ntitle: Leaked\nstatus: To Do\n---\nTOKEN=hunter2\n');
		symlinkSync(secret, join(project, 'backlog', 'tasks', 'task-9 - leaked.md'));
		const r = await runCliHere(['import', '--from', 'backlog-md', project, '--json'], { dataDir });
		assert.equal(r.code, 0, r.stderr);
		const answer = JSON.parse(r.stdout) as { cards: number; skips: { where: string; reason: string }[] };
		assert.equal(answer.cards, 6, 'the six real tasks');
		assert.ok(answer.skips.some(s => s.where.endsWith('task-9 - leaked.md') && s.reason.includes('symlink out of')));
		const exported = await runBaton(['export'], { dataDir });
		assert.doesNotMatch(exported.stdout, /hunter2|Leaked/);
	});

	it('refuses a FIFO among the Backlog.md tasks instead of waiting for ever', async () => {
		const project = join(scratch, 'fifo');
		cpSync(join(fixtures, 'backlog-md'), project, { recursive: true });
		execFileSync('mkfifo', [join(project, 'backlog', 'tasks', 'task-7 - fifo.md')]);
		await refusedFast(
			() => runBaton(['import', '--from', 'backlog-md', project], { dataDir }),
			/^baton import: The task file .*task-7 - fifo\.md is a FIFO \(named pipe\), not a regular file; Baton reads only regular files there\.$/,
		);
	});

	it('refuses /dev/stdin fed from /dev/zero for taskmaster', async () => {
		await refusedFast(
			() => runWithStdin(['import', '--from', 'taskmaster', '/dev/stdin'], dataDir, '/dev/zero'),
			/^baton import: The import file \/dev\/stdin is a character device, not a regular file/,
		);
	});

	it('refuses a beads file that is /dev/zero, and a beads folder whose file links out of it', async () => {
		const zero = join(scratch, 'zero.jsonl');
		symlinkSync('/dev/zero', zero);
		await refusedFast(
			() => runCliHere(['import', '--from', 'beads', zero], { dataDir }),
			/^baton import: The import file .*zero\.jsonl is a character device/,
		);
		const folder = join(scratch, 'beads-out');
		mkdirSync(join(folder, '.beads'), { recursive: true });
		symlinkSync(join(fixtures, 'beads', 'issues.jsonl'), join(folder, '.beads', 'issues.jsonl'));
		await refusedFast(
			() => runCliHere(['import', '--from', 'beads', folder], { dataDir }),
			/^baton import: .*issues\.jsonl is a symlink out of .*beads-out; Baton does not follow it\. Name the file itself/,
		);
	});

	it('refuses /dev/zero as a secret file', async () => {
		for (const verb of ['test', 'add']) {
			await refusedFast(
				() => runCliHere(['hooks', verb, 'http://127.0.0.1:9/hook', '--secret-file', '/dev/zero'], { dataDir }),
				new RegExp(
					`^baton hooks ${verb}: The secret file /dev/zero is a character device, not a regular file; Baton reads only regular files there\\.$`,
				),
			);
		}
	});

	it('refuses devices as plan, body, export and backup files, and on stdin', async () => {
		await refusedFast(
			() => runCliHere(['create', '--file', '/dev/zero'], { dataDir }),
			/^baton create: The plan file \/dev\/zero is a character device/,
		);
		await refusedFast(
			() => runCliHere(['create', 'T', '--body-file', '/dev/zero'], { dataDir }),
			/^baton create: The body file \/dev\/zero is a character device/,
		);
		await refusedFast(
			() => runWithStdin(['create', '--file', '-'], dataDir, '/dev/zero'),
			/^baton create: The plan file on stdin is a character device, not a regular file; Baton reads only a pipe, a file or a terminal there\.$/,
		);
		await refusedFast(
			() => runWithStdin(['import', '-'], dataDir, '/dev/zero'),
			/^baton import: The export on stdin is a character device/,
		);
		await refusedFast(
			() => runCliHere(['restore', '/dev/zero'], { dataDir }),
			/^baton restore: The backup \/dev\/zero is a character device/,
		);
	});

	it('still reads a plan piped on stdin', async () => {
		const r = await runBaton(['create', '--file', '-', '--json'], { dataDir, input: '[{"title":"piped"}]' });
		assert.equal(r.code, 0, r.stderr);
	});
});
