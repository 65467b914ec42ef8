/**
 * How the tools are registered and listed. The SDK validates arguments against the registered
 * inputSchema and then hands the handler its parse result; Baton registers a pass-through object
 * there and validates in toolHandler with the full protocol schema instead, so every refusal has the
 * one "invalid_input: field: problem. Next step." shape. tools/list is answered here from each tool's
 * lean listing schema (leanSchema.ts) without `$schema` and `execution: {taskSupport: 'forbidden'}`
 * (the MCP default when absent): the SDK's own listing of the full schemas was 13.4 KB against the
 * byte budget (docs/decisions/0008-mcp-budget.md), nor `additionalProperties`.
 * Every tool declares a title and all four annotation hints; the listing leaves out a hint that equals
 * the MCP default, which means the same to every client and saves about 40 bytes a tool.
 */
import type { McpServer, RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
	type CallToolResult,
	ListToolsRequestSchema,
	type Tool,
	type ToolAnnotations,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

type AnyObject = z.ZodObject<z.ZodRawShape>;

/** The four hints, each stated on purpose (the MCP defaults assume a destructive, open-world tool). */
export type ToolHints = Required<
	Pick<ToolAnnotations, 'readOnlyHint' | 'destructiveHint' | 'idempotentHint' | 'openWorldHint'>
>;

/** Reads the backlog and changes nothing. Every Baton tool acts on the backlog only: a closed world. */
export const readOnlyTool: ToolHints = {
	readOnlyHint: true,
	destructiveHint: false,
	idempotentHint: true,
	openWorldHint: false,
};

/** Changes the backlog by adding to it or moving a card along; a repeat call acts again (or is refused). */
export const updatingTool: ToolHints = {
	readOnlyHint: false,
	destructiveHint: false,
	idempotentHint: false,
	openWorldHint: false,
};

/** The values a client assumes for an absent hint (MCP schema, ToolAnnotations). */
const hintDefaults: ToolHints = {
	readOnlyHint: false,
	destructiveHint: true,
	idempotentHint: false,
	openWorldHint: true,
};

/**
 * The hints as listed: only those that differ from the default, and for a read-only tool not the
 * destructive and idempotent ones, which the schema calls meaningful only when readOnlyHint is false.
 */
export function listedHints(hints: ToolHints): ToolAnnotations {
	const out: ToolAnnotations = {};
	for (const key of Object.keys(hintDefaults) as (keyof ToolHints)[]) {
		const meaningless = hints.readOnlyHint && (key === 'destructiveHint' || key === 'idempotentHint');
		if (hints[key] !== hintDefaults[key] && !meaningless) {
			out[key] = hints[key];
		}
	}
	return out;
}

export interface ListedTool {
	registered: RegisteredTool;
	/** The strict, compact schema tools/list advertises. */
	listing: AnyObject;
}

/** Accepts any object and keeps every key, so the full schema in toolHandler sees what was sent. */
const passThroughInput = z.looseObject({});

export function registerListedTool(
	server: McpServer,
	name: string,
	config: { title: string; description: string; listing: AnyObject; annotations: ToolHints },
	handler: (args: unknown, extra?: { signal?: AbortSignal }) => Promise<CallToolResult>,
): ListedTool {
	const registered = server.registerTool(
		name,
		{
			title: config.title,
			description: config.description,
			inputSchema: passThroughInput,
			annotations: config.annotations,
		},
		handler,
	);
	return { registered, listing: config.listing };
}

/**
 * Leaves out `additionalProperties` everywhere (29 bytes a tool, which paid for the `reserve` tool):
 * the listing says what to send, and an unknown key is still refused in toolHandler, naming the
 * accepted ones. An object without properties (create's `cards` items) is listed as just an object.
 */
function withoutAdditionalProperties(schema: unknown): unknown {
	if (Array.isArray(schema)) {
		return schema.map(withoutAdditionalProperties);
	}
	if (typeof schema !== 'object' || schema === null) {
		return schema;
	}
	const out: Record<string, unknown> = {};
	for (const [key, value] of Object.entries(schema as Record<string, unknown>)) {
		const empty =
			key === 'properties' && typeof value === 'object' && value !== null && Object.keys(value).length === 0;
		if (key !== 'additionalProperties' && !empty) {
			out[key] = withoutAdditionalProperties(value);
		}
	}
	return out;
}

export function listingOf(name: string, tool: ListedTool): Tool {
	const { $schema: _schema, ...schema } = z.toJSONSchema(tool.listing, { target: 'draft-7', io: 'input' });
	const inputSchema = withoutAdditionalProperties(schema);
	const { registered } = tool;
	return {
		name,
		...(registered.title === undefined ? {} : { title: registered.title }),
		...(registered.description === undefined ? {} : { description: registered.description }),
		inputSchema: inputSchema as Tool['inputSchema'],
		...(registered.annotations === undefined
			? {}
			: { annotations: listedHints({ ...hintDefaults, ...registered.annotations }) }),
	};
}

/** Call after every tool is registered: the SDK installs its own tools/list handler on the first one. */
export function useCompactToolListing(server: McpServer, tools: ReadonlyMap<string, ListedTool>): void {
	server.server.setRequestHandler(ListToolsRequestSchema, () => ({
		tools: [...tools].filter(([, tool]) => tool.registered.enabled).map(([name, tool]) => listingOf(name, tool)),
	}));
}
