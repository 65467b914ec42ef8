/**
 * Commands that change a card rather than its claim: create, block, unblock, reopen (asking before a
 * forced reopen when work built on it has started) and link dependencies. Input is validated with the
 * protocol's schemas before it is sent; the hub decides legality, nothing here re-checks it.
 */
import * as vscode from 'vscode';
import { BatonError } from '../../core/errors';
import type { CreateCardInput } from '../../core/protocol';
import { commandIds } from './ids';
import { type CommandKit, optionsOf, schemas } from './kit';

export function registerCardEditCommands(kit: CommandKit): vscode.Disposable[] {
	const { ctx, hub, register, resolveCard, all, holder, ask, notify, summary } = kit;

	return [
		register(commandIds.blockCard, async (arg, optArg) => {
			const opts = optionsOf(optArg);
			const card = await resolveCard(
				arg,
				'Block Card',
				() => all(c => c.status === 'ready' || c.status === 'claimed'),
				c => (c.status === 'claimed' ? `Park it in Blocked, releasing ${holder(c)}'s claim` : 'Park it in Blocked'),
				'No ready or in-progress card to block.',
			);
			if (!card) {
				return undefined;
			}
			const reason =
				opts.reason ?? (await ask(`Why is ${card.id} blocked?`, { required: true, schema: p => p.Reason }));
			if (reason === undefined) {
				return undefined;
			}
			const r = await hub.request('card/block', { cardId: card.id, reason });
			notify(`Blocked ${card.id}.`, card.id);
			return r;
		}),
		register(commandIds.unblockCard, async arg => {
			const card = await resolveCard(
				arg,
				'Unblock Card',
				() => all(c => c.status === 'blocked'),
				c => `Back to Ready${c.blockedReason ? ` (was: ${c.blockedReason})` : ''}`,
				'No card is blocked.',
			);
			if (!card) {
				return undefined;
			}
			const r = await hub.request('card/unblock', { cardId: card.id });
			notify(`Unblocked ${card.id}; it is ready again.`, card.id);
			return r;
		}),
		register(commandIds.reopenCard, async (arg, optArg) => {
			const opts = optionsOf(optArg);
			const card = await resolveCard(
				arg,
				'Reopen Card',
				() => all(c => c.status === 'done'),
				() => 'Back to Ready; cards that depend on it wait again',
				'No card is done.',
			);
			if (!card) {
				return undefined;
			}
			const params = {
				cardId: card.id,
				...(opts.reason === undefined ? {} : { reason: opts.reason }),
				...(opts.force === true ? { force: true } : {}),
			};
			let r;
			try {
				r = await hub.request('card/reopen', params);
			} catch (e) {
				// Dependents already built on it: say which, and reopen only when the user says so.
				if (!BatonError.is(e, 'has_dependents') || opts.confirm === false) {
					throw e;
				}
				const choice = await vscode.window.showWarningMessage(
					`Reopen ${card.id} although work built on it has started?`,
					{
						modal: true,
						detail: `${e.message}\n\nForced, claimed dependents go back to the queue and done ones are flagged.`,
					},
					'Reopen Anyway',
				);
				if (choice !== 'Reopen Anyway') {
					return undefined;
				}
				r = await hub.request('card/reopen', { ...params, force: true });
			}
			notify(`Reopened ${card.id}.`, card.id);
			return r;
		}),
		register(commandIds.createCard, async arg => {
			await hub.whenAttached();
			let input: CreateCardInput;
			if (typeof arg === 'object' && arg !== null && !('kind' in arg)) {
				const parsed = (await schemas()).CreateCardInput.safeParse(arg);
				if (!parsed.success) {
					throw new BatonError(
						'invalid_input',
						`Cannot create that card: ${parsed.error.issues[0]?.message ?? 'invalid input'}.`,
					);
				}
				input = parsed.data;
			} else {
				const title = await ask('Title of the new card', { required: true, schema: p => p.Title });
				if (title === undefined) {
					return undefined;
				}
				const phase = await vscode.window.showInputBox({
					prompt: 'Phase (optional)',
					value: ctx.backlog.filter.phase ?? '',
					ignoreFocusOut: true,
				});
				if (phase === undefined) {
					return undefined;
				}
				const priority = await vscode.window.showInputBox({
					prompt: 'Priority (higher is sooner)',
					value: '0',
					ignoreFocusOut: true,
					validateInput: v => (/^-?\d{1,7}$/.test(v.trim()) ? undefined : 'a whole number, e.g. 0 or 5'),
				});
				if (priority === undefined) {
					return undefined;
				}
				input = { title, priority: Number(priority.trim()), ...(phase.trim() === '' ? {} : { phase: phase.trim() }) };
			}
			const r = await hub.request('card/create', { cards: [input] });
			const card = r.cards[0];
			if (card) {
				notify(`Created ${card.id} — ${card.title}.`, card.id);
			}
			return r;
		}),
		register(commandIds.linkDependency, async (arg, depsArg) => {
			const card = await resolveCard(
				arg,
				'Link Dependency: the card that waits',
				() => all(c => c.status !== 'done'),
				() => 'Choose the cards it must wait for next',
				'There is no open card to link.',
			);
			if (!card) {
				return undefined;
			}
			let deps: string[];
			if (Array.isArray(depsArg) && depsArg.every((d): d is string => typeof d === 'string')) {
				deps = depsArg;
			} else if (typeof depsArg === 'string') {
				deps = [depsArg];
			} else {
				const now = Date.now();
				const picked = await vscode.window.showQuickPick(
					all(c => c.id !== card.id && !card.dependsOn.includes(c.id)).map(c => ({
						label: c.title,
						description: summary(c, now),
						detail: `${card.id} waits until ${c.id} is done${c.status === 'done' ? ' (already done)' : ''}`,
						id: c.id,
					})),
					{ title: `${card.id} depends on…`, canPickMany: true, matchOnDescription: true },
				);
				if (picked === undefined || picked.length === 0) {
					return undefined;
				}
				deps = picked.map(p => p.id);
			}
			const r = await hub.request('card/link', { cardId: card.id, dependsOn: deps });
			notify(`${card.id} now depends on ${deps.join(', ')}.`, card.id);
			return r;
		}),
	];
}
