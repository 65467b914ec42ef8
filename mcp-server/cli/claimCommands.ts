/**
 * CLI subcommands of the claim cycle: claim, heartbeat, complete, release, fail, reserve and reclaim.
 * Each is one hub request whose flags are bound to its params schema (flags.ts), so the CLI refuses
 * exactly what the hub, the MCP tools and the board refuse. A CLI agent keeps its own lease alive.
 * Claims go to the working directory's project unless --project / --no-project say otherwise.
 */
import {
	AgentReclaimParams,
	ClaimParams,
	type ClaimedWorkspace,
	CompleteParams,
	FailParams,
	HeartbeatParams,
	NextClaim,
	ReclaimParams,
	ReleaseParams,
	ReserveParams,
	type Result,
} from '../../core/protocol';
import { BatonError, describeIssues } from '../../core/errors';
import { cardChangeCommand } from './cardChange';
import { type Command, arg, show } from './command';
import { type FieldFlag, cliFlags, paramFlags } from './flags';
import { UsageError, truncate, workspaceChanges } from './output';
import { chosenProject, noProjectFlag } from './project';
import { cliReason } from './projectNote';
import { workspaceAllowanceMs } from './hubClient';

/** claim's flags, and complete's for its --next claim. */
const claimFieldFlags = {
	phase: { value: 'NAME' },
	capabilities: { value: 'CAPS', description: 'Capabilities you have' },
	ttlSeconds: { flag: 'ttl', value: 'SECONDS' },
} as const satisfies Record<string, FieldFlag>;
const claimFlags = paramFlags(ClaimParams, {
	...claimFieldFlags,
	waitSeconds: { flag: 'wait', value: 'SECONDS' },
	review: { description: "Take review work instead (needs the capability 'review')" },
	labels: { value: 'LABELS', description: 'Only cards with one of these labels' },
	project: {
		value: 'ID',
		description: 'This project\'s cards and cards with none; "*": any (default: this folder\'s)',
	},
});

/** "⏎Workspace: …" for a claim that got one, else nothing. */
function workspaceLine(ws: ClaimedWorkspace | undefined): string {
	return ws === undefined
		? ''
		: `\nWorkspace: ${ws.path} (branch ${ws.branch} from ${ws.base}): work and commit only there.`;
}

const claim: Command = {
	name: 'claim',
	summary: 'Claim the best ready card (or the card ID) for this agent',
	args: '[ID]',
	minArgs: 0,
	maxArgs: 1,
	options: { ...claimFlags.options, ...noProjectFlag.options },
	notes:
		'A CLI agent keeps its lease alive with explicit "baton heartbeat" calls. Without --project, it claims\n' +
		"cards of BATON_PROJECT, else of this folder's git repository, and cards with no project; outside a\n" +
		'repository, only cards with no project.',
	async run(ctx) {
		const { project: flag, ...params } = claimFlags.read(ctx.values);
		const project = await chosenProject(flag, noProjectFlag.read(ctx.values).noProject, ctx.workingProject);
		const cardId = ctx.positionals[0];
		// Where a project with workspaces on makes the card's worktree: this checkout.
		const root = await ctx.workingRoot();
		const hub = await ctx.hub();
		const r = await hub.request(
			'card/claim',
			{ ...params, project, ...(cardId === undefined ? {} : { cardId }), ...(root === undefined ? {} : { root }) },
			{ timeoutMs: (params.waitSeconds ?? 0) * 1000 + 15_000 + (root === undefined ? 0 : workspaceAllowanceMs) },
		);
		show(ctx, r, () =>
			r.card === null || r.lease === null
				? r.reason === undefined
					? 'Nothing claimable.'
					: cliReason(r.reason)
				: `Claimed ${r.card.id} (epoch ${r.lease.epoch}, lease until ${r.lease.expiresAt}): ${truncate(r.card.title, 60)}\n` +
					`${workspaceLine(r.workspace).slice(1)}${r.workspace === undefined ? '' : '\n'}` +
					`Next: baton heartbeat ${r.card.id} --progress N, then baton complete ${r.card.id} --result "..."`,
		);
		return 0;
	},
};

const heartbeatFlags = paramFlags(HeartbeatParams, {
	epoch: {},
	progress: { value: 'PCT' },
	note: { value: 'TEXT' },
	ttlSeconds: { flag: 'ttl', value: 'SECONDS' },
});

const heartbeat: Command = {
	name: 'heartbeat',
	summary: 'Report progress on a card you hold and renew its lease',
	args: 'ID',
	minArgs: 1,
	maxArgs: 1,
	options: heartbeatFlags.options,
	async run(ctx) {
		const params = heartbeatFlags.read(ctx.values);
		const hub = await ctx.hub();
		const r = await hub.request('card/heartbeat', { cardId: arg(ctx, 0), ...params });
		show(ctx, r, () => `Lease on ${r.card.id} renewed until ${r.lease.expiresAt} (epoch ${r.lease.epoch}).`);
		return 0;
	},
};

const completeFlags = paramFlags(CompleteParams, { epoch: {}, result: { value: 'TEXT' }, force: {} });
const nextFlag = cliFlags({
	next: { type: 'boolean', description: 'Also claim the next best card in the same step' },
});
const nextClaimFlags = paramFlags(NextClaim, {
	phase: { ...claimFieldFlags.phase, description: 'With --next: only cards in this phase' },
	capabilities: { ...claimFieldFlags.capabilities, description: 'With --next: capabilities you have' },
	ttlSeconds: { ...claimFieldFlags.ttlSeconds, description: 'With --next: lease length; default 300' },
	project: { value: 'ID', description: 'With --next: as claim --project' },
	labels: { value: 'LABELS', description: 'With --next: only cards with one of these labels' },
});

const complete: Command = {
	name: 'complete',
	summary: 'Mark a card you hold as done',
	args: 'ID',
	minArgs: 1,
	maxArgs: 1,
	options: { ...completeFlags.options, ...nextFlag.options, ...nextClaimFlags.options },
	async run(ctx) {
		const { next } = nextFlag.read(ctx.values);
		const { project: projectFlag, ...nextClaim } = nextClaimFlags.read(ctx.values);
		if (!next && (Object.keys(nextClaim).length > 0 || projectFlag !== undefined)) {
			throw new UsageError(
				'--phase, --capabilities, --ttl, --project and --labels apply to the next card: add --next, or drop them.',
			);
		}
		const params = completeFlags.read(ctx.values);
		// With --next: where the next card's worktree goes, as claim sends it.
		const root = next ? await ctx.workingRoot() : undefined;
		const hub = await ctx.hub();
		const r = await hub.request(
			'card/complete',
			{
				cardId: arg(ctx, 0),
				...params,
				...(next
					? {
							next: {
								...nextClaim,
								project: await chosenProject(projectFlag, false, ctx.workingProject),
								...(root === undefined ? {} : { root }),
							},
						}
					: {}),
			},
			root === undefined ? undefined : { timeoutMs: 15_000 + workspaceAllowanceMs },
		);
		show(ctx, r, () => {
			const leftOpen = r.leftOpen === undefined ? '' : ` Its open children stay open: ${r.leftOpen.join(', ')}.`;
			const done = `Completed ${r.card.id}.${leftOpen}${r.unblocked.length > 0 ? ` Now claimable: ${r.unblocked.join(', ')}.` : ''}${completedWork(r)}`;
			if (r.next === undefined) {
				return done;
			}
			const { card, lease, reason } = r.next;
			return card === null || lease === null
				? `${done}\nNothing claimable next${reason === undefined ? '.' : `: ${reason}`}`
				: `${done}\nClaimed ${card.id} (epoch ${lease.epoch}, lease until ${lease.expiresAt}): ${truncate(card.title, 60)}${workspaceLine(r.next.workspace)}`;
		});
		return 0;
	},
};

/** What complete did in the card's worktree: its branch's counts and, in team mode, the push. */
function completedWork(r: Result<'card/complete'>): string {
	const ws = r.card.workspace;
	const changes = ws === undefined ? null : workspaceChanges(ws);
	if (ws === undefined || changes === null) {
		return '';
	}
	const push =
		r.push === undefined
			? ''
			: r.push.ok
				? `\nPushed ${ws.branch} to ${r.push.remote}.`
				: `\nPushing ${ws.branch} to ${r.push.remote} failed (the completion stands): ${r.push.error ?? 'unknown error'}`;
	if (ws.landed !== undefined) {
		// Review none: the completion landed it, and the branch is gone.
		return `\nLanded on ${ws.base} as ${ws.landed.commit.slice(0, 12)} (${ws.landed.mode}): ${changes}.`;
	}
	return `\nBranch ${ws.branch}: ${changes} against ${ws.base}.${push}`;
}

const releaseFlags = paramFlags(ReleaseParams, { epoch: {}, reason: { value: 'TEXT' }, force: {} });

const release = cardChangeCommand('release', 'Hand a card you hold back to ready', releaseFlags, (hub, cardId, p) =>
	hub.request('card/release', { cardId, ...p }),
);

const failFlags = paramFlags(FailParams, {
	reason: { value: 'TEXT' },
	epoch: {},
	retry: { flag: 'no-retry', negate: true, description: 'Park it in blocked instead of returning it to ready' },
	backoffSeconds: { flag: 'backoff', value: 'SECONDS' },
});

const fail = cardChangeCommand('fail', 'Report that work on a card you hold failed', failFlags, (hub, cardId, p) =>
	hub.request('card/fail', { cardId, ...p }),
);

const reserveFlags = paramFlags(ReserveParams, { epoch: {} });

function reserveText(r: Result<'card/reserve'>): string {
	const lines: string[] = [];
	if (r.granted.length > 0) {
		lines.push(`Reserved for ${r.card.id}: ${r.granted.join(', ')}`);
	}
	for (const refusal of r.refused) {
		lines.push(`Refused ${refusal.path}: ${refusal.cardId} (${refusal.holder}) holds ${refusal.theirs}`);
	}
	return lines.length === 0 ? `Nothing to reserve for ${r.card.id}.` : lines.join('\n');
}

const reserve: Command = {
	name: 'reserve',
	summary: 'Add paths to the scope of a card you hold; paths another claim holds are refused, naming it',
	args: 'ID PATH...',
	minArgs: 2,
	maxArgs: Infinity,
	options: reserveFlags.options,
	notes:
		'Each PATH is a glob from the project root ("src/db/**") or a lock ("lock:db-migrations"). What is\n' +
		'granted stays reserved until the claim ends; a refused path prints the card and agent holding it.',
	async run(ctx) {
		const params = reserveFlags.read(ctx.values);
		const [cardId = '', ...paths] = ctx.positionals;
		// Checked before a hub is started, as flags are; the hub checks each entry's syntax (core/scope.ts).
		const checked = ReserveParams.shape.paths.safeParse(paths);
		if (!checked.success) {
			throw new BatonError('invalid_input', describeIssues(checked.error.issues), { field: 'paths' });
		}
		const hub = await ctx.hub();
		const r = await hub.request('card/reserve', { cardId, paths: checked.data, ...params });
		show(ctx, r, () => reserveText(r));
		return 0;
	},
};

const reclaimFlags = paramFlags(ReclaimParams, { reason: { value: 'TEXT' } });
/** --from names an agent: agent/reclaim instead of card/reclaim (optional here: ID is the other way). */
const fromFlag = paramFlags(AgentReclaimParams.partial(), { agentId: { flag: 'from', value: 'AGENT' } });

const reclaim: Command = {
	name: 'reclaim',
	summary: 'Take a card back from its holder (ID), every card of an agent (--from), or every expired lease',
	args: '[ID]',
	minArgs: 0,
	maxArgs: 1,
	options: { ...reclaimFlags.options, ...fromFlag.options },
	async run(ctx) {
		const { agentId } = fromFlag.read(ctx.values);
		const cardId = ctx.positionals[0];
		if (agentId !== undefined && cardId !== undefined) {
			throw new UsageError('Give a card ID or --from AGENT, not both.');
		}
		const params = reclaimFlags.read(ctx.values);
		const hub = await ctx.hub();
		const r =
			agentId === undefined
				? await hub.request('card/reclaim', { ...params, ...(cardId === undefined ? {} : { cardId }) })
				: await hub.request('agent/reclaim', { agentId, ...params });
		show(ctx, r, () =>
			r.cards.length === 0
				? 'Nothing to reclaim.'
				: `Reclaimed ${r.cards.length}: ${r.cards.map(c => c.id).join(', ')}`,
		);
		return 0;
	},
};

export const claimCommands: readonly Command[] = [claim, heartbeat, complete, release, fail, reserve, reclaim];
