/**
 * `baton gc` in process, without a hub: its argument handling (help, usage errors, a
 * project id checked before any hub is started) and the report it prints, where a dry run's "would
 * delete" lines read exactly as gc's "deleted" lines. The real runs against a hub are in
 * landingHub.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { gcReportText } from '../../mcp-server/cli/gcCommand';
import { runCli } from '../../mcp-server/cli/run';
import { captureOutput } from '../helpers/cliOutput';

describe('baton gc arguments', () => {
	it('--help names the flags and what stays safe', async () => {
		const out = captureOutput();
		assert.equal(await runCli(['gc', '--help'], out, {}), 0);
		assert.match(out.stdout, /^Usage: baton gc \[options\]/);
		for (const flag of ['--dry-run', '--force', '--project ID']) {
			assert.ok(out.stdout.includes(flag), flag);
		}
		assert.match(out.stdout, /unless --force/);
	});

	const usage: [string, string[], RegExp][] = [
		['an argument', ['gc', 'now'], /Too many arguments/],
		['an unknown flag', ['gc', '--all'], /all/],
		['a value on a switch', ['gc', '--dry-run=yes'], /dry-run/],
	];
	for (const [what, argv, message] of usage) {
		it(`exits 2 on ${what}, asking no hub`, async () => {
			const out = captureOutput();
			assert.equal(await runCli(argv, out, { BATON_DATA_DIR: '/nonexistent/never' }), 2);
			assert.match(out.stderr, message);
		});
	}

	it('refuses a project that is no project id before any hub is started (exit 1)', async () => {
		const out = captureOutput();
		assert.equal(await runCli(['gc', '--project', 'a*b', '--json'], out, { BATON_DATA_DIR: '/nonexistent/never' }), 1);
		const body = JSON.parse(out.stdout) as { error: { code: string; message: string } };
		assert.equal(body.error.code, 'invalid_input');
		assert.match(body.error.message, /--project/);
	});
});

describe('the gc report', () => {
	const item = (kind: 'worktree' | 'branch' | 'wip', target: string, cardId: string) => ({
		kind,
		target,
		cardId,
		reason: `card ${cardId} is not live`,
	});
	const worktreeA = item('worktree', '/r/.baton/worktrees/A', 'A');
	const branchA = item('branch', 'refs/heads/baton/A', 'A');
	const planned = [worktreeA, branchA];
	const kept = [
		{ ...item('worktree', '/r/.baton/worktrees/B', 'B'), reason: 'it has changes that are not snapshotted' },
	];

	it("a dry run's lines are gc's deleted lines, word for word after the verb", () => {
		const dry = gcReportText({ root: '/r', projects: ['p'], items: planned, kept, deleted: [], skipped: [] }, true);
		const real = gcReportText(
			{ root: '/r', projects: ['p'], items: planned, kept, deleted: planned, skipped: [] },
			false,
		);
		const would = dry.split('\n').filter(l => l.startsWith('  would delete '));
		const deleted = real.split('\n').filter(l => l.startsWith('  deleted '));
		assert.equal(would.length, 2);
		assert.deepEqual(
			deleted.map(l => l.slice('  deleted '.length)),
			would.map(l => l.slice('  would delete '.length)),
		);
		assert.match(dry, /^\/r: would delete 2, kept 1$/m);
		assert.match(
			dry,
			/^ {2}kept worktree +\/r\/\.baton\/worktrees\/B \(card B\): it has changes that are not snapshotted$/m,
		);
		assert.match(real, /^\/r: deleted 2, kept 1, skipped 0$/m);
	});

	it('names what gc skipped because it changed since the plan', () => {
		const text = gcReportText(
			{
				root: '/r',
				projects: [],
				items: planned,
				kept: [],
				deleted: [branchA],
				skipped: [{ ...worktreeA, why: 'its files changed since the plan' }],
			},
			false,
		);
		assert.match(text, /skipped worktree +\/r\/\.baton\/worktrees\/A \(card A\): its files changed since the plan/);
	});
});
