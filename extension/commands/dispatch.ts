/**
 * Dispatch from VS Code (issue 30): Start Agents… (`baton run` with a built-in agent or a command
 * template, N seats, in a terminal or the background: agentRuns.ts), Stop Agents (`run/stop`: drain,
 * or stop now after a confirmation), Pause… / Resume… (everything, a project or a card: `pause/set`,
 * `pause/clear`), Assign Card… (`card/assign`) and a seat's live output (seatOutput.ts). Options
 * passed as the argument answer the prompts (the tests, keybindings). The hub decides and refuses;
 * nothing here re-checks its rules.
 */
import * as vscode from 'vscode';
import { pauseTarget, pauseText, seatText } from '../../core/rules/dispatched';
import type { Params, Pause, PauseScope } from '../../core/protocol';
import { AgentRuns, type RunRequest } from '../agentRuns';
import type { DispatchWatch } from '../dispatchWatch';
import type { SeatOutputs } from '../seatOutput';
import { commandIds } from './ids';
import { type CommandKit, cardIdOf, optionsOf } from './kit';

/** What the dispatch commands need beyond the kit. */
export interface DispatchParts {
	watch: DispatchWatch;
	outputs: SeatOutputs;
	runs: AgentRuns;
}

const builtInAgents = [
	{ kind: 'claude', label: 'Claude Code' },
	{ kind: 'codex', label: 'Codex CLI' },
	{ kind: 'gemini', label: 'Gemini CLI' },
] as const;

interface StartOptions {
	agent?: string;
	command?: string;
	seats?: number;
	project?: string | null;
	phase?: string;
	name?: string;
	where?: 'terminal' | 'background';
}

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

export function registerDispatchCommands(kit: CommandKit, parts: DispatchParts): vscode.Disposable[] {
	const { ctx, hub, register, resolveCard, all, ask, notify } = kit;
	const { watch, outputs, runs } = parts;
	const pick = async <T extends vscode.QuickPickItem>(items: T[], title: string, placeHolder?: string) =>
		vscode.window.showQuickPick(items, { title, ...(placeHolder === undefined ? {} : { placeHolder }) });

	const startAgents = async (arg: unknown) => {
		const opts = optionsOf(arg) as StartOptions;
		await hub.whenAttached();
		let agent = opts.agent;
		let command = opts.command;
		if (agent === undefined && command === undefined) {
			const choice = await pick(
				[
					...builtInAgents.map(a => ({ label: a.label, description: `--agent ${a.kind}`, agent: a.kind })),
					{ label: 'Custom command…', description: '--command TEMPLATE', agent: '' },
				],
				'Start Agents: which agent?',
				'Each seat runs this program on the next claimable card',
			);
			if (!choice) {
				return undefined;
			}
			if (choice.agent === '') {
				command = await vscode.window.showInputBox({
					title: 'Start Agents: command template',
					prompt: 'Placeholders: {mcpConfig} {promptFile} {prompt} {cardId} {workspace}',
					placeHolder: 'my-agent --mcp-config {mcpConfig} --prompt-file {promptFile}',
					ignoreFocusOut: true,
					validateInput: v => (v.trim() === '' ? 'Type the command to run for each card' : undefined),
				});
				if (command === undefined) {
					return undefined;
				}
			} else {
				agent = choice.agent;
			}
		}
		let seats = opts.seats;
		if (seats === undefined) {
			const choice = await pick(
				[1, 2, 3, 4, 6, 8].map(n => ({ label: `${n} seat${n === 1 ? '' : 's'}`, n })),
				'Start Agents: how many at once?',
				'At most this many agents hold cards at the same time',
			);
			if (!choice) {
				return undefined;
			}
			seats = choice.n;
		}
		// `baton run` takes this checkout's project by default; '*' is every project.
		let project = opts.project === null ? '*' : opts.project;
		const own = ctx.projects.projects;
		if (opts.project === undefined && own.length > 0) {
			const choice = await pick(
				[
					...own.map(p => ({ label: p, description: 'this workspace’s project', project: p })),
					{ label: 'Every project', description: 'any claimable card of the backlog', project: '*' },
				],
				'Start Agents: cards of which project?',
			);
			if (!choice) {
				return undefined;
			}
			project = choice.project;
		}
		const where = opts.where ?? (hub.settings.agentsStartIn === 'background' ? 'background' : 'terminal');
		const request: RunRequest = {
			seats,
			where,
			cwd: ctx.projects.roots[0]?.root ?? vscode.workspace.workspaceFolders?.[0]?.uri.fsPath,
			...(agent === undefined ? {} : { agent }),
			...(command === undefined ? {} : { command }),
			...(project === undefined ? {} : { project }),
			...(opts.phase === undefined ? {} : { phase: opts.phase }),
			...(opts.name === undefined ? {} : { name: opts.name }),
		};
		const name = opts.name ?? 'default';
		const background = runs.start(request);
		if (background !== undefined) {
			// Registered (the run's run_updated event refreshes the watch), or its own error when it exits first.
			const registered = new Promise<void>(resolve => {
				const check = () => {
					if (watch.liveRuns().some(r => r.name === name && r.pid === background.process.pid)) {
						sub.dispose();
						resolve();
					}
				};
				const sub = watch.onDidChange(check);
				check();
			});
			await AgentRuns.started(background, registered);
			notify(`Started ${seats} seat${seats === 1 ? '' : 's'} of ${agent ?? 'the command'}: run ${name}.`);
			return { name, pid: background.process.pid };
		}
		return { name };
	};

	const stopAgents = async (arg: unknown) => {
		const opts = optionsOf(arg) as { name?: string; stop?: boolean; confirm?: boolean };
		await hub.whenAttached();
		await watch.refresh();
		const live = watch.liveRuns();
		if (live.length === 0 && opts.name === undefined) {
			notify('No Baton run is registered for this backlog.');
			return undefined;
		}
		let name = opts.name;
		if (name === undefined && live.length > 1) {
			const choice = await pick(
				[
					{ label: 'Every run', name: undefined as string | undefined },
					...live.map(r => ({
						label: r.name,
						description: `${r.host} · pid ${r.pid} · ${r.inUse}/${r.seats}`,
						name: r.name,
					})),
				],
				'Stop Agents: which run?',
			);
			if (!choice) {
				return undefined;
			}
			name = choice.name;
		}
		let stop = opts.stop;
		if (stop === undefined) {
			const choice = await pick(
				[
					{ label: 'Drain', detail: 'Running agents finish their cards; no new card is started', stop: false },
					{ label: 'Stop now', detail: 'Stop running agents; their cards are released, work snapshotted', stop: true },
				],
				'Stop Agents',
			);
			if (!choice) {
				return undefined;
			}
			stop = choice.stop;
		}
		if (stop && opts.confirm !== false) {
			const busy = watch.seats().filter(s => s.card !== undefined && (name === undefined || s.run === name)).length;
			const ok = await vscode.window.showWarningMessage(
				`Stop ${busy} running agent${busy === 1 ? '' : 's'} now?`,
				{ modal: true, detail: 'Their cards go back to Ready with their work snapshotted; no attempt is used.' },
				'Stop Now',
			);
			if (ok === undefined) {
				return undefined;
			}
		}
		const r = await hub.request('run/stop', { ...(name === undefined ? {} : { name }), stop });
		void watch.refresh();
		notify(stop ? 'Stopping the agents now.' : 'Draining: running agents finish their cards, no new ones start.');
		return r;
	};

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

	const showSeatOutput = async (arg: unknown, seatArg: unknown) => {
		const o = optionsOf(arg) as { run?: string; seat?: number };
		let run = typeof arg === 'string' ? arg : o.run;
		let seat = typeof seatArg === 'number' ? seatArg : o.seat;
		if (run === undefined || seat === undefined) {
			await hub.whenAttached();
			const now = Date.now();
			const seats = watch.seats(now);
			if (seats.length === 0) {
				notify('No Baton run is registered: start agents with "Baton: Start Agents…".');
				return undefined;
			}
			const choice = await pick(
				seats.map(s => ({
					label: `Seat ${s.seat}${s.run === 'default' ? '' : ` (${s.run})`}`,
					description: s.card?.dispatch ? `${seatText(s.card.dispatch, now)} · ${s.card.dispatch.kind}` : 'free',
					...(s.card === undefined ? {} : { detail: `${s.card.id} ${s.card.title}` }),
					s,
				})),
				'Open a Seat’s Output',
			);
			if (!choice) {
				return undefined;
			}
			run = choice.s.run;
			seat = choice.s.seat;
		}
		const tail = outputs.show(run, seat);
		return { run, seat, channel: tail.channel.name };
	};

	return [
		register(commandIds.startAgents, startAgents),
		register(commandIds.stopAgents, stopAgents),
		register(commandIds.pause, pauseLine),
		register(commandIds.resume, resumeLine),
		register(commandIds.assignCard, assignCard),
		register(commandIds.showSeatOutput, showSeatOutput),
	];
}
