/**
 * Agent runs from VS Code: Start Agents… (`baton run` with a built-in agent or a command
 * template, N seats, a project, in a terminal or the background: agentRuns.ts), Stop Agents (`run/stop`:
 * drain, or stop now after a confirmation) and a seat's live output (seatOutput.ts). Options passed as
 * the argument answer the prompts (the tests, keybindings). The hub and `baton run` decide and refuse;
 * nothing here re-checks their rules.
 */
import * as vscode from 'vscode';
import { seatText } from '../../core/rules/dispatched';
import { AgentRuns, type RunRequest } from '../agentRuns';
import { commandIds } from './ids';
import { type CommandKit, optionsOf } from './kit';

/** The agents Start Agents offers by name (`baton run --agent`); the tree's Assign offers their kinds. */
export const builtInAgents = [
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

export function registerRunCommands(kit: CommandKit): vscode.Disposable[] {
	const { ctx, hub, register, notify } = kit;
	const { watch, outputs, runs } = ctx.dispatch;
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
		register(commandIds.showSeatOutput, showSeatOutput),
	];
}
