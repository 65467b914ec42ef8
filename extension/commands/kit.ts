/**
 * What every command module shares: the context main.ts passes in, reading a command's arguments
 * (card id, tree node, options), and one `CommandKit` of helpers built per registration: `register`
 * (a failure is shown once with Retry / Show Log and logged, never thrown), card quick picks whose
 * items say what choosing them does, prompts validated by the protocol's schemas, confirmation before
 * overriding another agent's lease, and notifications. Registers no command itself and holds no
 * state of its own: the cards come from the connection's cache.
 */
import * as vscode from 'vscode';
import { BatonError } from '../../core/errors';
import type { Card } from '../../core/protocol';
import type { BacklogNode } from '../backlogNodes';
import type { BacklogTreeProvider } from '../backlogTree';
import { cardSummary, compareByPriority } from '../cardText';
import type { HubConnection } from '../hubConnection';
import type { McpTarget } from '../mcpConfig';
import type { AgentRuns } from '../agentRuns';
import type { DispatchWatch } from '../dispatchWatch';
import type { SeatOutputs } from '../seatOutput';
import type { WorkspaceProjects } from '../workspaceProjects';

/** Options a caller (a test, a keybinding) may pass instead of answering prompts. */
export interface CardCommandOptions {
	reason?: string;
	result?: string;
	/** Act on a card another agent holds without asking (the human override). */
	force?: boolean;
	/** false: skip the confirmation dialog. */
	confirm?: boolean;
}

/** What the dispatch commands need: runs and pauses, seats' output, starting `baton run`. */
export interface DispatchParts {
	watch: DispatchWatch;
	outputs: SeatOutputs;
	runs: AgentRuns;
}

export interface CommandContext {
	hub: HubConnection;
	backlog: BacklogTreeProvider;
	backlogView: vscode.TreeView<BacklogNode>;
	log: vscode.LogOutputChannel;
	/** The workspace's projects and the All projects switch. */
	projects: WorkspaceProjects;
	openBoard(cardId?: string): Promise<void>;
	openBoardInEditor(cardId?: string): Promise<void>;
	configureMcp(target: McpTarget, confirm: boolean): Promise<string | undefined>;
	/** Runs, pauses, seats' output and starting `baton run`. */
	dispatch: DispatchParts;
}

/** A card id from whatever a command was invoked with: id, tree node, agent node, {cardId}. */
export function cardIdOf(arg: unknown): string | undefined {
	if (typeof arg === 'string' && arg !== '') {
		return arg;
	}
	if (typeof arg !== 'object' || arg === null) {
		return undefined;
	}
	// Tree nodes arrive as plain objects (BacklogNode / AgentNode); check their shape, not their type.
	const o = arg as { kind?: unknown; card?: { id?: unknown }; view?: { cards?: { id?: unknown }[] }; cardId?: unknown };
	const id = o.kind === 'card' ? o.card?.id : o.kind === 'agent' ? o.view?.cards?.[0]?.id : o.cardId;
	return typeof id === 'string' ? id : undefined;
}

export function optionsOf(arg: unknown): CardCommandOptions {
	return typeof arg === 'object' && arg !== null ? arg : {};
}

/** The protocol's schemas, loaded when a prompt needs them (not at activation: see hubConnection.ts). */
export const schemas = () => import('../../core/protocol');

interface Schema {
	safeParse(v: unknown): { success: boolean; error?: { issues: { message: string }[] } };
}

function validator(schema: Schema) {
	return (value: string): string | undefined => {
		const r = schema.safeParse(value);
		return r.success ? undefined : (r.error?.issues[0]?.message ?? 'invalid value');
	};
}

/** The helpers the command modules share, bound to one CommandContext (see makeCommandKit). */
export type CommandKit = ReturnType<typeof makeCommandKit>;

export function makeCommandKit(ctx: CommandContext) {
	const { hub, log } = ctx;
	const ttl = () => hub.settings.claimTtlSeconds;
	const me = () => hub.me;
	const known = (id: string): Card => {
		const card = hub.cards.get(id);
		if (!card) {
			throw new BatonError('not_found', `Card ${id} is not in this backlog (${hub.dataDir}).`);
		}
		return card;
	};

	/** The card's one-line summary, with its holder's health as this window sees it. */
	const summary = (card: Card, now: number) =>
		cardSummary(card, now, hub.thresholds, hub.healthOf(card.claimOwner, now));

	/** Quick pick of cards; each item's detail says what choosing it will do. */
	const pickCard = async (
		title: string,
		cards: Card[],
		effect: (card: Card) => string,
		empty: string,
	): Promise<Card | undefined> => {
		if (cards.length === 0) {
			void vscode.window.showInformationMessage(empty);
			return undefined;
		}
		const now = Date.now();
		const picked = await vscode.window.showQuickPick(
			cards.map(card => ({
				label: card.title,
				description: summary(card, now),
				detail: effect(card),
				card,
			})),
			{ title, matchOnDescription: true, matchOnDetail: false, placeHolder: 'Type to filter by id, title or owner' },
		);
		return picked?.card;
	};

	/** The card a command acts on: its argument, else a pick among `candidates`. */
	const resolveCard = async (
		arg: unknown,
		title: string,
		candidates: () => Card[],
		effect: (card: Card) => string,
		empty: string,
	): Promise<Card | undefined> => {
		await hub.whenAttached();
		const id = cardIdOf(arg);
		if (id !== undefined) {
			return known(id);
		}
		return pickCard(title, candidates(), effect, empty);
	};

	const all = (pred: (c: Card) => boolean) => [...hub.cards.values()].filter(pred).sort(compareByPriority);
	const holder = (card: Card) => (card.claimOwner === hub.me ? 'you' : (card.claimOwner ?? 'nobody'));

	/** Asks before overriding another agent's lease; `force` answers it in advance. */
	const confirmOverride = async (card: Card, verb: string, opts: CardCommandOptions): Promise<boolean | undefined> => {
		if (card.status !== 'claimed' || card.claimOwner === hub.me) {
			return false;
		}
		if (opts.force === true || opts.confirm === false) {
			return true;
		}
		const choice = await vscode.window.showWarningMessage(
			`${card.id} is held by ${card.claimOwner ?? 'another agent'}. ${verb} it anyway?`,
			{ modal: true, detail: 'Their lease is fenced: further heartbeats and completions from them are refused.' },
			`${verb} Anyway`,
		);
		return choice === undefined ? undefined : true;
	};

	const ask = async (
		prompt: string,
		opts: { value?: string; required: boolean; schema: (p: Awaited<ReturnType<typeof schemas>>) => Schema },
	) => {
		const schema = opts.schema(await schemas());
		const value = await vscode.window.showInputBox({
			prompt,
			value: opts.value ?? '',
			ignoreFocusOut: true,
			validateInput: v => (v === '' && !opts.required ? undefined : validator(schema)(v)),
		});
		return value;
	};

	const notify = (message: string, cardId?: string) => {
		log.info(message);
		if (cardId === undefined) {
			void vscode.window.showInformationMessage(message);
			return;
		}
		void vscode.window.showInformationMessage(message, 'Open on Board').then(choice => {
			if (choice !== undefined) {
				void ctx.openBoard(cardId);
			}
		});
	};

	/** Runs a command body; a failure is shown once (Retry / Show Log) and logged, never thrown. */
	const register = (id: string, body: (...args: unknown[]) => Promise<unknown>): vscode.Disposable =>
		vscode.commands.registerCommand(id, async (...args: unknown[]) => {
			try {
				return await body(...args);
			} catch (e) {
				const message = e instanceof Error ? e.message : String(e);
				log.error(`${id} failed: ${BatonError.is(e) ? `${e.code}: ` : ''}${message}`);
				if (!BatonError.is(e) && e instanceof Error && e.stack) {
					log.error(e.stack);
				}
				void vscode.window.showErrorMessage(message, 'Retry', 'Show Log').then(choice => {
					if (choice === 'Retry') {
						void vscode.commands.executeCommand(id, ...args);
					} else if (choice === 'Show Log') {
						log.show();
					}
				});
				return undefined;
			}
		});

	return { ctx, hub, log, ttl, me, summary, resolveCard, all, holder, confirmOverride, ask, notify, register };
}
