/**
 * The extension's pure parts, table-driven: health and stalled as the trees call them (core's rules,
 * shared with the board), lease texts, MCP config merging.
 */
import assert from 'node:assert/strict';
import { agentHealth, isAgentStalled } from '../../../core/rules/health';
import { isLeaseExpired } from '../../../core/rules/lease';
import type { Card } from '../../../core/protocol';
import { cardContextValue, groupOf } from '../../../extension/backlogNodes';
import { formatDuration } from '../../../core/duration';
import { cardSummary, leaseText } from '../../../extension/cardText';
import { mergeMcpConfig } from '../../../core/formats/mcpConfig';
import { makeCard } from '../../helpers/cards';
import { describe, it } from './harness';

const t = { healthySeconds: 30, lateSeconds: 100, staleSeconds: 300, stallSeconds: 900 };
const now = Date.parse('2026-11-22T12:00:00.000Z');
const ago = (s: number) => new Date(now - s * 1000).toISOString();

function card(over: Partial<Card>): Card {
	return makeCard({ id: 'A1', title: 'T', createdAt: ago(1000), ...over });
}

describe('pure rules', () => {
	it('derives health from last seen at the default thresholds', () => {
		const cases: [number, string][] = [
			[0, 'healthy'],
			[29.9, 'healthy'],
			[30, 'late'],
			[99, 'late'],
			[100, 'stale'],
			[299, 'stale'],
			[300, 'dead'],
			[86_400, 'dead'],
		];
		for (const [age, expected] of cases) {
			assert.equal(agentHealth(ago(age), now, t), expected, `${age} s`);
		}
		assert.equal(agentHealth('not a date', now, t), 'dead');
	});

	it('flags stalled only for a live agent without progress for stallSeconds', () => {
		const held = [card({ status: 'claimed', claimedAt: ago(1000), progressAt: ago(950) })];
		assert.equal(isAgentStalled('healthy', held, now, t), true);
		assert.equal(isAgentStalled('late', held, now, t), true);
		assert.equal(isAgentStalled('stale', held, now, t), false, 'a stale agent is stale, not stalled');
		assert.equal(
			isAgentStalled('healthy', [card({ status: 'claimed', claimedAt: ago(1000), progressAt: ago(10) })], now, t),
			false,
		);
		assert.equal(isAgentStalled('healthy', [], now, t), false);
		// The Backlog tree's summary says the same about the card: stalled for a live holder only.
		const quiet = card({ status: 'claimed', claimOwner: 'codex-1', claimedAt: ago(1000), progressAt: ago(900) });
		assert.equal(cardSummary(quiet, now, t, 'healthy'), 'A1 · codex-1 · stalled');
		assert.equal(cardSummary(quiet, now, t, 'dead'), 'A1 · codex-1');
	});

	it('describes leases, expiry and groups', () => {
		const claimed = card({
			status: 'claimed',
			claimOwner: 'codex-1',
			leaseExpiresAt: new Date(now + 245_000).toISOString(),
			progress: 40,
			progressAt: ago(5),
			claimedAt: ago(60),
		});
		assert.equal(leaseText(claimed, now), 'lease 4m 05s');
		assert.equal(cardSummary(claimed, now, t, 'healthy'), 'A1 · codex-1 · lease 4m 05s · 40%');
		const expired = { ...claimed, leaseExpiresAt: ago(12) };
		assert.equal(isLeaseExpired(expired, now), true);
		assert.equal(leaseText(expired, now), 'lease expired 12s ago');
		// At the very instant the lease ends it is over, in the text as in the rule (core/rules/lease.ts).
		const atEnd = { ...claimed, leaseExpiresAt: new Date(now).toISOString() };
		assert.equal(isLeaseExpired(atEnd, now), true);
		assert.equal(leaseText(atEnd, now), 'lease expired 0s ago');
		assert.equal(formatDuration(3_720_000), '1h 02m');
		assert.equal(groupOf(card({ unmetDeps: 2 })), 'waiting');
		assert.equal(groupOf(card({})), 'ready');
		assert.equal(cardContextValue(claimed, 'codex-1'), 'card.claimed.mine');
		assert.equal(cardContextValue(claimed, 'vscode:me'), 'card.claimed.other');
		assert.equal(cardContextValue(card({ status: 'done' }), 'x'), 'card.done');
		// Failed (attempts used up) and parked by a human are different groups with their own menus.
		const failed = card({ status: 'blocked', failed: true, blockedReason: 'attempt 3 of 3 failed' });
		assert.equal(groupOf(failed), 'failed');
		assert.equal(cardContextValue(failed, 'x'), 'card.failed');
		assert.equal(groupOf(card({ status: 'blocked', blockedReason: 'legal' })), 'blocked');
	});

	it('merges the MCP entry into existing config files and refuses broken ones', () => {
		const launch = { command: 'baton', args: ['mcp'], env: { BATON_DATA_DIR: '/d' } };
		const merged = JSON.parse(
			mergeMcpConfig(
				'claude-code',
				JSON.stringify({ mcpServers: { other: { command: 'x' } }, keep: 1 }),
				launch,
				'.mcp.json',
			),
		) as { mcpServers: Record<string, unknown>; keep: number };
		assert.deepEqual(merged.mcpServers.baton, { command: 'baton', args: ['mcp'], env: { BATON_DATA_DIR: '/d' } });
		assert.ok(merged.mcpServers.other);
		assert.equal(merged.keep, 1);
		const vscodeConfig = JSON.parse(mergeMcpConfig('vscode', undefined, { ...launch, env: {} }, 'mcp.json')) as {
			servers: { baton: Record<string, unknown> };
		};
		assert.deepEqual(vscodeConfig.servers.baton, { type: 'stdio', command: 'baton', args: ['mcp'] });
		assert.throws(() => mergeMcpConfig('cursor', '{ nope', launch, '.cursor/mcp.json'), /not valid JSON/);
		assert.throws(() => mergeMcpConfig('cursor', '[1]', launch, '.cursor/mcp.json'), /JSON object/);
	});
});
