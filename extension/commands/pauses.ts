/**
 * Pausing the line and assigning cards from VS Code: Pause… / Resume… (everything, a project
 * or a card, from the palette, a card's menu or a pause's row in the tree: `pause/set`, `pause/clear`)
 * and Assign Card… (`card/assign`: one agent or `kind:K`). Options passed as the argument answer the
 * prompts (the tests, keybindings). The hub decides and refuses; nothing here re-checks its rules.
 */
import * as vscode from 'vscode';
import { pauseTarget, pauseText } from '../../core/rules/dispatched';
import type { Params, Pause, PauseScope } from '../../core/protocol';
import { commandIds } from './ids';
import { type CommandKit, cardIdOf, optionsOf } from './kit';
import { builtInAgents } from './runs';

interface PauseOptions {
	scope?: PauseScope;
	target?: string;
	reason?: string;
	stop?: boolean;
	confirm?: boolean;
}

/** The pause a tree row stands for ({kind: 'pause', pause}). */

function pauseOfArg(arg: unknown): Pause | undefined {
	const o = arg as { kind?: unknown; pause?: Pause } | null | undefined;
	return o?.kind === 'pause' ? o.pause : undefined;
}

export function registerPauseCommands(kit: CommandKit): vscode.Disposable[] {
	const { ctx, hub, register, resolveCard, all, ask, notify } = kit;
	const { watch } = ctx.dispatch;
	const pick = async <T extends vscode.QuickPickItem>(items: T[], title: string, placeHolder?: string) =>
		vscode.window.showQuickPick(items, { title, ...(placeHolder === undefined ? {} : { placeHolder }) });

	const pauseLine = async (arg: unknown) => {
		const opts = optionsOf(arg) as PauseOptions;
		await hub.whenAttached();
		let scope = opts.scope;
		let target = opts.target;
		const cardId = cardIdOf(arg);
		if (scope === undefined && cardId !== undefined) {
			scope = 'card';
			target = cardId;
		}
		if (scope === undefined) {
			const projects = [
				...new Set([...ctx.projects.projects, ...[...hub.cards.values()].map(c => c.project ?? null)]),
			].filter((p): p is string => p !== null);
			const choice = await pick(
				[
					{
						label: '$(debug-pause) Everything',
						detail: 'No card is claimed by anyone until you resume',
						scope: 'all' as const,
					},
					...projects.map(p => ({
						label: `$(repo) ${p}`,
						description: 'project',
						scope: 'project' as const,
						target: p,
					})),
					{ label: '$(note) One card…', scope: 'card' as const },
				],
				'Pause',
				'What no agent may claim until resumed',
			);
			if (!choice) {
				return undefined;
			}
			scope = choice.scope;
			target = 'target' in choice ? choice.target : undefined;
			if (scope === 'card') {
				const card = await resolveCard(
					undefined,
					'Pause a Card',
					() => all(c => c.status === 'ready' || c.status === 'claimed'),
					() => 'Nobody claims it until resumed',
					'No card is ready or in progress.',
				);
				if (!card) {
					return undefined;
				}
				target = card.id;
			}
		}
		let reason = opts.reason;
		if (reason === undefined && opts.confirm !== false) {
			reason = await vscode.window.showInputBox({
				title: `Pause ${scope === 'all' ? 'everything' : `${scope} ${target ?? ''}`}`,
				prompt: 'Why? (optional; refused claims say it)',
				ignoreFocusOut: true,
				validateInput: v => (v.length > 500 ? 'At most 500 characters' : undefined),
			});
			if (reason === undefined) {
				return undefined;
			}
		}
		let stop = opts.stop;
		if (stop === undefined && opts.confirm !== false) {
			const choice = await pick(
				[
					{ label: 'Let running agents finish', detail: 'Drain: cards already claimed are finished', stop: false },
					{ label: 'Stop running agents too', detail: 'Their cards are released, work snapshotted', stop: true },
				],
				'Pause: and the agents already working?',
			);
			if (!choice) {
				return undefined;
			}
			stop = choice.stop;
		}
		const r = await hub.request('pause/set', {
			scope,
			...(target === undefined ? {} : { target }),
			...(reason === undefined || reason.trim() === '' ? {} : { reason: reason.trim() }),
			...(stop === true ? { stop } : {}),
		});
		void watch.refresh();
		notify(
			`Paused ${pauseTarget(r.pause)}.${r.cards.length > 0 ? ` ${r.cards.length} dispatched card(s) are covered.` : ''}`,
		);
		return r;
	};

	const resumeLine = async (arg: unknown) => {
		const opts = optionsOf(arg) as { scope?: PauseScope; target?: string; all?: boolean };
		await hub.whenAttached();
		type Chosen = { scope: PauseScope; target?: string | null } | { all: true };
		let chosen: Chosen | undefined = pauseOfArg(arg);
		const cardId = cardIdOf(arg);
		if (chosen === undefined && opts.all === true) {
			chosen = { all: true };
		} else if (chosen === undefined && opts.scope !== undefined) {
			chosen = { scope: opts.scope, ...(opts.target === undefined ? {} : { target: opts.target }) };
		} else if (chosen === undefined && cardId !== undefined) {
			chosen = { scope: 'card', target: cardId };
		}
		if (chosen === undefined) {
			await watch.refresh();
			const pauses = watch.pauses;
			if (pauses.length === 0) {
				notify('Nothing is paused.');
				return undefined;
			}
			const choice = await pick(
				[
					...pauses.map(p => ({ label: `$(debug-start) ${pauseTarget(p)}`, detail: pauseText(p), value: p })),
					...(pauses.length > 1 ? [{ label: '$(debug-continue) Everything paused', value: undefined }] : []),
				],
				'Resume',
			);
			if (!choice) {
				return undefined;
			}
			chosen = choice.value ?? { all: true };
		}
		const params: Params<'pause/clear'> =
			'all' in chosen
				? { all: true }
				: { scope: chosen.scope, ...(chosen.target == null ? {} : { target: chosen.target }) };
		const r = await hub.request('pause/clear', params);
		void watch.refresh();
		notify(r.cleared.length === 0 ? 'That was not paused.' : `Resumed ${r.cleared.map(pauseTarget).join(', ')}.`);
		return r;
	};

	const assignCard = async (arg: unknown, optArg: unknown) => {
		const opts = optionsOf(optArg) as { assignee?: string | null };
		const card = await resolveCard(
			arg,
			'Assign Card',
			() => all(c => c.status !== 'done'),
			c => (c.assignee ? `Assigned to ${c.assignee}` : 'Anyone may claim it'),
			'No card to assign.',
		);
		if (!card) {
			return undefined;
		}
		let assignee = opts.assignee;
		if (assignee === undefined) {
			const agents = hub.agents.filter(a => a.id !== hub.me).map(a => a.id);
			const choice = await pick(
				[
					...builtInAgents.map(a => ({
						label: `kind:${a.kind}`,
						description: `any ${a.label} agent`,
						value: `kind:${a.kind}`,
					})),
					...agents.map(id => ({ label: id, description: 'this agent only', value: id })),
					{ label: 'Someone else…', description: 'an agent id or kind:K', value: '' },
					...(card.assignee ? [{ label: 'Anyone', description: 'clear the assignment', value: null }] : []),
				] as { label: string; description: string; value: string | null }[],
				`Assign ${card.id}: who may claim it?`,
			);
			if (!choice) {
				return undefined;
			}
			assignee = choice.value;
			if (assignee === '') {
				assignee = await ask('Agent id (no spaces) or kind:K', { required: true, schema: p => p.Assignee });
				if (assignee === undefined) {
					return undefined;
				}
			}
		}
		const r = await hub.request('card/assign', { cardId: card.id, assignee });
		notify(assignee === null ? `${card.id}: anyone may claim it.` : `${card.id} is assigned to ${assignee}.`, card.id);
		return r;
	};

	return [
		register(commandIds.pause, pauseLine),
		register(commandIds.resume, resumeLine),
		register(commandIds.assignCard, assignCard),
	];
}
