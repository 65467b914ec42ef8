/**
 * The claim cycle from VS Code: claim the next card or a chosen one, complete or release it, and the
 * human's overrides of an agent's claim (reclaim one card, every expired lease, or all an agent
 * holds). Each command asks before fencing another agent's lease unless told `force` / `confirm:
 * false`, and returns the hub's result. Decides nothing itself: claimability and expiry are core's
 * rules (core/rules/claimable.ts, core/rules/lease.ts) and every refusal comes from the hub.
 */
import * as vscode from 'vscode';
import { isClaimable } from '../../core/rules/claimable';
import { holdsOf } from '../../core/rules/faceHolds';
import { BatonError } from '../../core/errors';
import { isLeaseExpired } from '../../core/rules/lease';
import type { Card, ClaimedWorkspace } from '../../core/protocol';
import type { AgentNode } from '../agentsTree';
import { commandIds } from './ids';
import { type CommandKit, cardIdOf, optionsOf } from './kit';

/** " Work in <path> (branch <branch>)." when the claim made the card's worktree. */
function workspaceNote(ws: ClaimedWorkspace | undefined): string {
	return ws === undefined ? '' : ` Work in ${ws.path} (branch ${ws.branch}).`;
}

export function registerClaimCycleCommands(kit: CommandKit): vscode.Disposable[] {
	const { ctx, hub, register, resolveCard, all, holder, confirmOverride, ask, notify, ttl, me } = kit;
	/** The cards claimable now, as the claim guards say with the holds the cards at hand show (faceHolds.ts). */
	const claimable = (): Card[] => {
		const held = holdsOf(hub.cards.values(), ctx.dispatch.watch.pauses);
		const now = Date.now();
		return all(c => isClaimable(held(c), now));
	};
	/** Cards in progress, the human's own first (what complete and release usually mean). */
	const inProgressMineFirst = () =>
		all(c => c.status === 'claimed').sort((a, b) => Number(b.claimOwner === me()) - Number(a.claimOwner === me()));

	return [
		register(commandIds.claimNextCard, async arg => {
			const opts = optionsOf(arg) as { phase?: string };
			const r = await hub.request('card/claim', {
				ttlSeconds: ttl(),
				...(typeof opts.phase === 'string' ? { phase: opts.phase } : {}),
			});
			if (r.card === null) {
				notify(`Nothing to claim${r.reason ? `: ${r.reason}` : '.'}`);
			} else {
				notify(
					`Claimed ${r.card.id} — ${r.card.title}.${workspaceNote(r.workspace)} Your lease is renewed while this window is open.`,
					r.card.id,
				);
			}
			return r;
		}),
		register(commandIds.claimCard, async arg => {
			const card = await resolveCard(
				arg,
				'Claim Card',
				claimable,
				() => `Claim as ${me()}: lease ${ttl()} s, renewed while this window is open`,
				'No card is claimable right now.',
			);
			if (!card) {
				return undefined;
			}
			const r = await hub.request('card/claim', { cardId: card.id, ttlSeconds: ttl() });
			if (r.card === null) {
				throw new BatonError('invalid_transition', `Could not claim ${card.id}${r.reason ? `: ${r.reason}` : '.'}`);
			}
			notify(`Claimed ${r.card.id} — ${r.card.title}.${workspaceNote(r.workspace)}`, r.card.id);
			return r;
		}),
		register(commandIds.completeCard, async (arg, optArg) => {
			const opts = optionsOf(optArg);
			const card = await resolveCard(
				arg,
				'Complete Card',
				inProgressMineFirst,
				c => (c.claimOwner === me() ? 'Mark done' : `Mark done, taking it from ${holder(c)} (forced)`),
				'No card is in progress.',
			);
			if (!card) {
				return undefined;
			}
			const force = await confirmOverride(card, 'Complete', opts);
			if (force === undefined) {
				return undefined;
			}
			const result =
				opts.result ??
				(opts.confirm === false
					? undefined
					: await ask(`What was done on ${card.id}? (optional)`, { required: false, schema: p => p.ResultText }));
			if (result === undefined && opts.result === undefined && opts.confirm !== false) {
				return undefined;
			}
			const r = await hub.request('card/complete', {
				cardId: card.id,
				...(result === undefined || result === '' ? {} : { result }),
				...(force ? { force: true } : {}),
			});
			notify(
				`Completed ${card.id}.${r.unblocked.length > 0 ? ` Now claimable: ${r.unblocked.join(', ')}.` : ''}`,
				card.id,
			);
			return r;
		}),
		register(commandIds.releaseCard, async (arg, optArg) => {
			const opts = optionsOf(optArg);
			const card = await resolveCard(
				arg,
				'Release Card',
				inProgressMineFirst,
				c =>
					c.claimOwner === me()
						? 'Give it back to Ready'
						: `Take it from ${holder(c)} and put it back in Ready (forced)`,
				'No card is in progress.',
			);
			if (!card) {
				return undefined;
			}
			const force = await confirmOverride(card, 'Release', opts);
			if (force === undefined) {
				return undefined;
			}
			const r = await hub.request('card/release', {
				cardId: card.id,
				...(opts.reason === undefined ? {} : { reason: opts.reason }),
				...(force ? { force: true } : {}),
			});
			notify(`Released ${card.id}; it is ready again.`, card.id);
			return r;
		}),
		register(commandIds.reclaimExpired, async arg => {
			const opts = optionsOf(arg);
			await hub.whenAttached();
			const expired = all(c => isLeaseExpired(c, Date.now()));
			if (opts.confirm !== false) {
				const detail =
					expired.length > 0
						? expired.map(c => `${c.id} (${c.claimOwner ?? '?'})`).join(', ')
						: 'This window sees no expired lease; the hub checks its own clock.';
				const choice = await vscode.window.showWarningMessage(
					`Return every expired claim to Ready?`,
					{ modal: true, detail },
					'Reclaim Expired',
				);
				if (choice === undefined) {
					return undefined;
				}
			}
			const r = await hub.request('card/reclaim', {});
			notify(
				r.cards.length === 0
					? 'No expired claims to reclaim.'
					: `Reclaimed ${r.cards.length}: ${r.cards.map(c => c.id).join(', ')}.`,
			);
			return r;
		}),
		register(commandIds.reclaimCard, async (arg, optArg) => {
			const opts = optionsOf(optArg);
			const card = await resolveCard(
				arg,
				'Reclaim Card',
				() => all(c => c.status === 'claimed'),
				c =>
					`Take it from ${holder(c)} and return it to Ready; their lease is fenced (epoch ${c.claimEpoch} → ${c.claimEpoch + 1})`,
				'No card is in progress.',
			);
			if (!card) {
				return undefined;
			}
			if (opts.confirm !== false && cardIdOf(arg) !== undefined) {
				const choice = await vscode.window.showWarningMessage(
					`Reclaim ${card.id} from ${holder(card)}?`,
					{ modal: true, detail: 'It returns to Ready and the holder’s lease is fenced.' },
					'Reclaim',
				);
				if (choice === undefined) {
					return undefined;
				}
			}
			const r = await hub.request('card/reclaim', {
				cardId: card.id,
				reason: opts.reason ?? `reclaimed by ${me()} from VS Code`,
			});
			notify(`Reclaimed ${card.id}; it is ready again.`, card.id);
			return r;
		}),
		register(commandIds.reclaimAgentClaims, async (arg, optArg) => {
			const opts = optionsOf(optArg);
			const agentId = typeof arg === 'string' ? arg : (arg as Partial<AgentNode> | undefined)?.view?.agent.id;
			if (agentId === undefined) {
				throw new BatonError('invalid_input', 'Choose an agent in the Agents view to reclaim its claims.');
			}
			if (opts.confirm !== false) {
				const held = [...hub.cards.values()].filter(c => c.status === 'claimed' && c.claimOwner === agentId);
				const choice = await vscode.window.showWarningMessage(
					`Reclaim every card ${agentId} holds?`,
					{
						modal: true,
						detail:
							held.length > 0
								? held.map(c => `${c.id} ${c.title}`).join('\n')
								: 'It holds no card this window knows of.',
					},
					'Reclaim',
				);
				if (choice === undefined) {
					return undefined;
				}
			}
			const r = await hub.request('agent/reclaim', {
				agentId,
				reason: opts.reason ?? `reclaimed by ${me()} from VS Code`,
			});
			notify(`Reclaimed ${r.cards.length} card(s) from ${agentId}.`);
			return r;
		}),
	];
}
