/**
 * Activation only: wires the connection, views, status bar, commands and MCP provider together and
 * returns. Nothing here waits for the hub (it connects in the background), so activation stays
 * cheap; see test/bench/activation.ts.
 */
import * as vscode from 'vscode';
// First, so its timestamp precedes the evaluation of every other bundled module.
import { moduleStartedAt, moduleStartedCpu } from './loadClock';
import { isClaimable } from '../core/rules/claimable';
import { holdsOf } from '../core/rules/faceHolds';
import { AgentsTreeProvider } from './agentsTree';
import { BacklogTreeProvider } from './backlogTree';
import { BoardPanel } from './boardPanel';
import { BoardViewProvider } from './boardView';
import type { BoardHost } from './boardWebview';
import { commandIds, registerCommands, viewIds } from './commands';
import { readConfig } from './config';
import { HubConnection } from './hubConnection';
import { configureMcp } from './mcpConfig';
import { type McpRegistration, registerMcpProvider } from './mcpProvider';
import { FleetAlerts } from './fleetAlerts';
import { HeldFileDecorations } from './heldFileDecorations';
import { ReviewDesk } from './reviewDesk';
import { AgentStatusBar, ReviewStatusBar } from './statusBar';
import { AgentRuns } from './agentRuns';
import { DispatchWatch } from './dispatchWatch';
import { SeatOutputs } from './seatOutput';
import { SeatStatusBar } from './seatStatusBar';
import { WorkspaceProjects } from './workspaceProjects';

/**
 * The end of module evaluation (main.ts is the entry, evaluated last). VS Code calls activate() only
 * later, after building the extension's context, so that wait is the editor's, not ours.
 */
const moduleEvaluatedAt = performance.now();
const moduleEvaluatedCpu = process.cpuUsage(moduleStartedCpu);

/** What activate() returns: the extension's live parts, for other extensions and the tests. */
export interface BatonApi {
	hub: HubConnection;
	backlog: BacklogTreeProvider;
	agents: AgentsTreeProvider;
	statusBar: AgentStatusBar;
	/** "N to review · M questions". */
	reviewBar: ReviewStatusBar;
	/** Review and question notifications. */
	desk: ReviewDesk;
	/** The workspace's projects and the All projects switch. */
	projects: WorkspaceProjects;
	/** Runs and pauses. */
	dispatch: DispatchWatch;
	/** "3/4 seats". */
	seatBar: SeatStatusBar;
	/** Each seat's live output. */
	seatOutputs: SeatOutputs;
	/** Files inside live claims' scopes: Explorer decorations and the edit warning. */
	heldFiles: HeldFileDecorations;
	mcp: McpRegistration;
	/** Time spent inside activate() itself, in ms. */
	activationMs: number;
	/** Evaluation of the bundle's modules, in ms. */
	moduleLoadMs: number;
	/** CPU time of module evaluation plus activate(), in ms. */
	activationCpuMs: number;
}

export function activate(context: vscode.ExtensionContext): BatonApi {
	const started = performance.now();
	const startedCpu = process.cpuUsage();
	const moduleLoadMs = moduleEvaluatedAt - moduleStartedAt;
	const log = vscode.window.createOutputChannel('Baton', { log: true });
	const config = readConfig();
	const hub = new HubConnection(context.extensionPath, log, config);

	const projects = new WorkspaceProjects(context.workspaceState);
	const dispatch = new DispatchWatch(hub);
	const backlog = new BacklogTreeProvider(hub, projects, dispatch);
	const backlogView = vscode.window.createTreeView(viewIds.backlog, {
		treeDataProvider: backlog,
		showCollapseAll: true,
	});
	const agents = new AgentsTreeProvider(hub);
	const agentsView = vscode.window.createTreeView(viewIds.agents, { treeDataProvider: agents });
	const statusBar = new AgentStatusBar(hub, projects);
	const fleetAlerts = new FleetAlerts(hub);
	const reviewBar = new ReviewStatusBar(hub, projects);
	const heldFiles = new HeldFileDecorations(hub, projects);
	const desk = new ReviewDesk(hub);
	const seatBar = new SeatStatusBar(hub, dispatch);
	const seatOutputs = new SeatOutputs(hub, dispatch);
	const agentRuns = new AgentRuns(context.extensionPath, () => hub.settings);

	const boardHost: BoardHost = {
		extensionUri: context.extensionUri,
		hub,
		log,
		projects,
		onViewMessage: message => {
			if (message.type === 'view/revealInTree') {
				void vscode.commands.executeCommand(commandIds.revealCard, message.cardId);
			}
		},
	};
	const boardView = new BoardViewProvider(boardHost);
	const boardPanel = new BoardPanel(boardHost);

	const mcp = registerMcpProvider(context, config);
	if (!mcp.registered) {
		log.info(mcp.reason);
	}

	// The badge counts cards that can be claimed right now: the claim guards' word `ready`, with the tree
	// and files holds derived from the cards at hand (core/rules/faceHolds.ts), so it offers none the hub refuses.
	const updateBadge = () => {
		const now = Date.now();
		const held = holdsOf(hub.cards.values(), dispatch.pauses);
		let ready = 0;
		for (const c of hub.cards.values()) {
			if (isClaimable(held(c), now) && projects.includes(c)) {
				ready++;
			}
		}
		backlogView.badge = ready > 0 ? { value: ready, tooltip: `${ready} card(s) ready to claim` } : undefined;
	};

	context.subscriptions.push(
		log,
		hub,
		projects,
		dispatch,
		seatBar,
		seatOutputs,
		agentRuns,
		heldFiles,
		backlog,
		backlogView,
		agents,
		agentsView,
		statusBar,
		fleetAlerts,
		reviewBar,
		desk,
		boardView,
		boardPanel,
		mcp,
		vscode.window.registerWebviewViewProvider(viewIds.board, boardView, {
			webviewOptions: { retainContextWhenHidden: true },
		}),
		hub.onDidChangeCards(updateBadge),
		dispatch.onDidChange(updateBadge),
		projects.onDidChange(() => {
			updateBadge();
			backlogView.description = backlog.describeFilter();
		}),
		...registerCommands({
			hub,
			backlog,
			backlogView,
			log,
			projects,
			openBoard: cardId => boardView.reveal(cardId),
			openBoardInEditor: cardId => {
				boardPanel.show(cardId);
				return Promise.resolve();
			},
			configureMcp: (target, confirm) => configureMcp(target, context.extensionPath, hub.settings, confirm, log),
			dispatch: { watch: dispatch, outputs: seatOutputs, runs: agentRuns },
		}),
		vscode.workspace.onDidChangeConfiguration(e => {
			if (e.affectsConfiguration('baton')) {
				const next = readConfig();
				hub.updateConfig(next);
				if (mcp.registered) {
					mcp.refresh(next);
				}
			}
		}),
	);

	hub.start();
	// git runs in the background: until it answers, every card shows (as in a folder outside git).
	void projects.refresh();
	const activationMs = performance.now() - started;
	const cpu = process.cpuUsage(startedCpu);
	const activationCpuMs = (cpu.user + cpu.system + moduleEvaluatedCpu.user + moduleEvaluatedCpu.system) / 1000;
	log.info(
		`Baton activated in ${activationMs.toFixed(1)} ms after ${moduleLoadMs.toFixed(1)} ms of module evaluation (the hub connects in the background).`,
	);
	return {
		hub,
		backlog,
		agents,
		statusBar,
		reviewBar,
		desk,
		projects,
		dispatch,
		seatBar,
		seatOutputs,
		heldFiles,
		mcp,
		activationMs,
		moduleLoadMs,
		activationCpuMs,
	};
}

export function deactivate(): void {
	// Everything is in context.subscriptions; the hub is shared and stops by itself when idle.
}
