/**
 * The supervisor's parts without a hub: the output log's tail on a real file, rate-limit
 * words, the failure streak and the cool-down, the table's text, the reasons with the last lines, and
 * real processes started, watched by pid and stopped with TERM then KILL.
 */
import assert from 'node:assert/strict';
import {
	appendFileSync,
	closeSync,
	existsSync,
	mkdtempSync,
	readFileSync,
	rmSync,
	statSync,
	writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';

import { builtInAgents, checkTemplate, splitTemplate } from '../../mcp-server/dispatch/agents';
import { Display, renderTable } from '../../mcp-server/dispatch/liveTable';
import { LogTail, capLog, cleanLine, openLogForAgent, withLines } from '../../mcp-server/dispatch/outputLog';
import { isAgentOf, spawnAgent, watchAdopted } from '../../mcp-server/dispatch/spawnAgent';
import { KindHealth, streakReason } from '../../mcp-server/dispatch/streaks';
import { commandRateLimit, exitRateLimit, rateLimitSignalKinds } from '../../mcp-server/dispatch/rateLimit';

const dir = mkdtempSync('/tmp/bt-parts-');
after(() => rmSync(dir, { recursive: true, force: true }));

describe('dispatch parts', () => {
	it('tails a log from the attempt start, keeping the last 20 lines and a partial one', () => {
		const path = join(dir, 'runs', 'r', 'A1.log');
		const first = openLogForAgent(path, 'attempt 1');
		appendFileSync(path, 'old attempt output\n');
		const { fd, offset } = openLogForAgent(path, 'attempt 2');
		assert.ok(offset > first.offset);
		const tail = new LogTail(path, offset);
		assert.deepEqual(tail.poll(), []);
		appendFileSync(path, Array.from({ length: 25 }, (_, i) => `line ${i}`).join('\n'));
		const fresh = tail.poll();
		assert.equal(fresh.length, 24, 'the unterminated last line waits');
		assert.equal(tail.last().length, 20);
		assert.equal(tail.last().at(-1), 'line 24');
		assert.equal(tail.last().includes('old attempt output'), false);
		appendFileSync(path, '\x1b[31mred\x1b[0m tail\n');
		assert.deepEqual(tail.poll(), ['line 24red tail']);
		tail.close();
		closeSync(first.fd);
		closeSync(fd);
		assert.equal(cleanLine('x'.repeat(300)).length, 200);
	});

	it('keeps the log of an agent printing 300 MB (8 million lines) at its cap, the tail kept, the agent unharmed', async () => {
		const path = join(dir, 'flood.log');
		const cap = 4 * 1024 * 1024;
		const { fd, offset } = openLogForAgent(path, 'flood attempt');
		// A real process writing straight into the file (its stdout is the file, as spawnAgent wires it).
		// Its last line comes once the flood has been cut back (the agent waits for the test's word): a
		// line written in the instant of a cut may be lost or land before the kept tail (outputLog.ts says
		// why), and on a loaded machine the instant can be seconds long. This checks the tail, not that.
		const flooded = join(dir, 'flooded');
		const go = join(dir, 'go');
		const agent = await spawnAgent({
			command: 'sh',
			args: [
				'-c',
				`yes "a line the agent prints over and over" | head -n 8000000; : > ${flooded}; while [ ! -e ${go} ]; do sleep 0.1; done; echo "the very last line"`,
			],
			cwd: dir,
			env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
			logFd: fd,
		});
		const tail = new LogTail(path, offset, cap);
		let peak = 0;
		const seen: string[] = [];
		// The job's tick (agentJob.ts tailMs), a little faster so the test is short either way.
		const timer = setInterval(() => {
			peak = Math.max(peak, statSync(path).size);
			seen.push(...tail.poll().slice(-1));
			// The flood is over and this tick found the file within its cap: no cut is under way.
			if (existsSync(flooded) && !existsSync(go) && statSync(path).size <= cap) {
				writeFileSync(go, '');
			}
		}, 250);
		const exit = await agent.exited;
		clearInterval(timer);
		peak = Math.max(peak, statSync(path).size);
		tail.poll();
		tail.close();
		assert.equal(exit.code, 0, 'the agent wrote all it wanted and ended well');
		const size = statSync(path).size;
		assert.ok(size <= cap, `${size} bytes after the last tick (cap ${cap})`);
		const text = readFileSync(path, 'utf8');
		assert.match(text, /^--- baton: this log passed its cap of 4194304 bytes/);
		assert.match(text.slice(-200), /the very last line\n$/, `the tail is kept: ${JSON.stringify(text.slice(-100))}`);
		assert.equal(tail.last().at(-1), 'the very last line');
		console.log(
			`300 MB printed: log ${(size / 1048576).toFixed(1)} MB at the end, ${(peak / 1048576).toFixed(0)} MB at most between ticks`,
		);
		// With no cap (0) nothing is cut.
		const plain = join(dir, 'plain.log');
		writeFileSync(plain, 'x\n'.repeat(1000));
		const uncapped = new LogTail(plain, 0, 0);
		uncapped.poll();
		uncapped.close();
		assert.equal(statSync(plain).size, 2000);
	});

	it("follows a log cut under it (an adopted agent's recorded offset is past the new end)", () => {
		const path = join(dir, 'cut.log');
		writeFileSync(path, 'old line\n'.repeat(2000));
		const tail = new LogTail(path, 18_000, 1000);
		appendFileSync(path, 'new 1\nnew 2\n');
		assert.deepEqual(tail.poll(), ['new 1', 'new 2']);
		assert.ok(statSync(path).size <= 1000, 'cut to its cap');
		assert.match(readFileSync(path, 'utf8'), /new 2\n$/);
		appendFileSync(path, 'after the cut\n');
		assert.deepEqual(tail.poll(), ['after the cut']);
		capLog(path, 40);
		appendFileSync(path, 'after another cut\n');
		assert.deepEqual(
			tail.poll().at(-1),
			'after another cut',
			'a log shorter than the offset is followed from its start',
		);
		tail.close();
	});

	it('knows a rate limit only from the agent’s own signal, never from words in its output', () => {
		// --command agents: the documented line (live or at exit), or exit code 75.
		assert.equal(commandRateLimit('BATON_RATE_LIMITED'), 'the agent said BATON_RATE_LIMITED');
		assert.equal(commandRateLimit('BATON_RATE_LIMITED {"reason":"429 from the API"}'), '429 from the API');
		assert.equal(commandRateLimit('BATON_RATE_LIMITED try at 5pm'), 'try at 5pm');
		for (const line of ['echo BATON_RATE_LIMITED', 'BATON_RATE_LIMITEDX', 'Ran 429 tests', 'rate limit reached']) {
			assert.equal(commandRateLimit(line), undefined, line);
		}
		assert.equal(exitRateLimit(undefined, 75, ['bye']), 'the agent exited with code 75 (rate limited)');
		assert.equal(exitRateLimit(undefined, 1, ['x', 'BATON_RATE_LIMITED {"reason":"quota"}']), 'quota');
		assert.equal(exitRateLimit(undefined, 1, ['HTTP 429 Too Many Requests', 'rate limit reached']), undefined);
		// Built-in CLIs: a non-zero exit and the CLI's own error report.
		const claude429 = 'API Error: 429 {"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}';
		assert.equal(exitRateLimit('claude', 1, ['working', claude429]), claude429);
		assert.equal(
			exitRateLimit('claude', 1, ['Claude AI usage limit reached|1753077600']),
			'Claude AI usage limit reached|1753077600',
		);
		assert.equal(exitRateLimit('claude', 0, [claude429]), undefined, 'it exited well: its work mentioned one');
		assert.equal(exitRateLimit('claude', null, [claude429]), undefined, 'a signal ended it');
		assert.equal(exitRateLimit('claude', 1, ['API Error: 500 overloaded']), undefined);
		const codex = 'ERROR: exceeded retry limit, last status: 429 Too Many Requests, request id: abc';
		assert.equal(exitRateLimit('codex', 1, ['exec ran', codex]), codex);
		assert.equal(
			exitRateLimit('codex', 1, ["ERROR: You've hit your usage limit. Try again later."]) !== undefined,
			true,
		);
		const gemini = ['✕ [API Error: [{', '    "error": {', '      "code": 429,', '      "status": "RESOURCE_EXHAUSTED"'];
		assert.equal(exitRateLimit('gemini', 1, gemini), gemini[0]);
		// The case: a test run's words, whatever the exit code and kind.
		const work = [
			'Ran 429 tests in 3.2s',
			'FAILED (quota checks: 1, rate limit middleware: 2)',
			'usage limit reached in fixture',
		];
		for (const agent of [undefined, 'claude', 'codex', 'gemini']) {
			for (const code of [0, 1, 2]) {
				assert.equal(exitRateLimit(agent, code, work), undefined, `${agent ?? '--command'} exit ${code}`);
			}
		}
		assert.deepEqual(rateLimitSignalKinds.sort(), [...builtInAgents].sort(), 'every built-in kind has its signal');
	});

	it('pauses on three failures in a row within ten minutes; a success or the window breaks the streak', () => {
		const h = new KindHealth(300_000);
		const f = (at: number, cardId: string) => ({ at, cardId, reason: `r ${cardId}` });
		assert.equal(h.failed('claude', f(0, 'A')), undefined);
		assert.equal(h.failed('claude', f(1000, 'B')), undefined);
		h.succeeded('claude');
		assert.equal(h.failed('claude', f(2000, 'C')), undefined);
		assert.equal(h.failed('claude', f(3000, 'D')), undefined);
		assert.equal(h.failed('codex', f(3500, 'X')), undefined, 'kinds count apart');
		const streak = h.failed('claude', f(4000, 'E'));
		assert.ok(streak);
		assert.deepEqual(
			streak.map(x => x.cardId),
			['C', 'D', 'E'],
		);
		assert.match(
			streakReason('claude', streak),
			/^3 claude agents failed in a row within 10 minutes \(C, D, E\); last: r E$/,
		);
		assert.equal(h.failed('gemini', f(0, 'G1')), undefined);
		assert.equal(h.failed('gemini', f(1, 'G2')), undefined);
		assert.equal(h.failed('gemini', f(10 * 60_000 + 2, 'G3')), undefined, 'older failures fall out of the window');
		assert.equal(h.coolingUntil('claude', 0), undefined);
		assert.equal(h.coolDown('claude', 1000), 301_000);
		assert.equal(h.coolingUntil('claude', 300_999), 301_000);
		assert.equal(h.coolingUntil('claude', 301_000), undefined);
	});

	it('puts the last lines in a reason within 1000 characters', () => {
		assert.equal(
			withLines('agent exited with code 1 before completing', []),
			'agent exited with code 1 before completing; it printed nothing',
		);
		const long = withLines(
			'head',
			Array.from({ length: 20 }, (_, i) => `${i} ${'y'.repeat(150)}`),
		);
		assert.ok(long.length <= 1000);
		assert.ok(long.endsWith(`19 ${'y'.repeat(150)}`));
	});

	it('draws the table', () => {
		const text = renderTable(
			[{ seat: 1, cardId: 'A1', agent: 'fake-default-s1-ab12', startedAt: 0, progress: 'step 3' }, { seat: 2 }],
			{ name: 'default', seats: 2, inUse: 1, mode: 'running', idle: 'no ready cards' },
			65_000,
		);
		const lines = text.split('\n');
		assert.equal(lines[0], 'baton run default: 1/2 seats · waiting: no ready cards');
		assert.match(lines[1] ?? '', /^SEAT\s+CARD\s+AGENT\s+ELAPSED\s+LAST PROGRESS$/);
		assert.match(lines[2] ?? '', /^1\s+A1\s+fake-default-s1-ab12\s+1m 05s\s+step 3$/);
		assert.match(lines[3] ?? '', /^2\s+-\s+free/);
	});

	it('writes nothing after a hangup', () => {
		const written: string[] = [];
		const display = new Display({ write: text => written.push(text), columns: 80 }, 'table');
		const status = { name: 'default', seats: 1, inUse: 0, mode: 'running' } as const;
		display.draw([{ seat: 1 }], status);
		display.event({ event: 'running' });
		assert.equal(written.length, 3, 'the table, its erasure, the event line');
		display.hangUp();
		display.event({ event: 'draining' });
		display.draw([{ seat: 1 }], { ...status, mode: 'draining' });
		assert.equal(written.length, 3);
	});

	it('splits templates and refuses unknown placeholders and missing programs', () => {
		assert.deepEqual(splitTemplate(`a "b c" 'd e' f\\ g {prompt}`), ['a', 'b c', 'd e', 'f g', '{prompt}']);
		assert.throws(() => checkTemplate('node {nope}'), /unknown placeholder \{nope\}/);
		assert.throws(() => checkTemplate('not-a-program-xyz'), /not on PATH/);
		assert.throws(() => checkTemplate('/no/such/file {prompt}'), /does not exist/);
		checkTemplate(`${process.execPath} x.mjs {mcpConfig} {promptFile} {prompt} {cardId} {workspace}`);
	});

	it('stops a process that ignores TERM with KILL after the grace, and knows its agent by its environment', async () => {
		const path = join(dir, 'runs', 'r', 'B1.log');
		const { fd } = openLogForAgent(path, 'x');
		const script =
			"process.on('SIGTERM', () => console.log('ignoring TERM')); console.log('up'); setInterval(() => {}, 1000);";
		const proc = await spawnAgent({
			command: process.execPath,
			args: ['-e', script],
			cwd: dir,
			env: { ...process.env, BATON_CARD_ID: 'B1' },
			logFd: fd,
		});
		const tail = new LogTail(path);
		for (let i = 0; i < 100 && !tail.last().includes('up'); i++) {
			tail.poll();
			await new Promise(r => setTimeout(r, 20));
		}
		assert.ok(isAgentOf(proc.pid, 'B1'));
		assert.equal(isAgentOf(proc.pid, 'B2'), false);
		const watched = watchAdopted(proc.pid, 'B1', 50);
		const t0 = Date.now();
		const exit = await proc.stop(400);
		assert.equal(exit.signal, 'SIGKILL');
		assert.ok(Date.now() - t0 >= 350, 'KILL waited for the grace');
		tail.poll();
		assert.ok(tail.last().includes('ignoring TERM'));
		assert.deepEqual(await watched.exited, { code: null, signal: null });
		assert.equal(isAgentOf(proc.pid, 'B1'), false);
		tail.close();
	});

	it('reports the exit code of an agent that ends by itself, and refuses a program that cannot start', async () => {
		const path = join(dir, 'runs', 'r', 'C1.log');
		const proc = await spawnAgent({
			command: process.execPath,
			args: ['-e', 'process.exit(7)'],
			cwd: dir,
			env: {},
			logFd: openLogForAgent(path, 'x').fd,
		});
		assert.deepEqual(await proc.exited, { code: 7, signal: null });
		await assert.rejects(
			spawnAgent({ command: join(dir, 'missing'), args: [], cwd: dir, env: {}, logFd: openLogForAgent(path, 'y').fd }),
			/ENOENT/,
		);
	});
});
