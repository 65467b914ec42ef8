/**
 * How the tools are registered and listed. The SDK validates arguments against the registered
 * inputSchema and then hands the handler its parse result; Baton registers a pass-through object
 * there and validates in toolHandler with the full protocol schema instead, so every refusal has the
 * one "invalid_input: field: problem. Next step." shape. tools/list is answered here from each tool's
 * lean listing schema (leanSchema.ts) without `$schema` and `execution: {taskSupport: 'forbidden'}`
 * (the MCP default when absent): the SDK's own listing of the full schemas was 13.4 KB against the
 * 6 KB budget of issue 3.
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
	config: { description: string; listing: AnyObject; annotations?: ToolAnnotations },
	handler: (args: unknown, extra?: { signal?: AbortSignal }) => Promise<CallToolResult>,
): ListedTool {
	const registered = server.registerTool(
		name,
		{
			description: config.description,
			inputSchema: passThroughInput,
			...(config.annotations === undefined ? {} : { annotations: config.annotations }),
		},
		handler,
	);
	return { registered, listing: config.listing };
}

export function listingOf(name: string, tool: ListedTool): Tool {
	const { $schema: _schema, ...inputSchema } = z.toJSONSchema(tool.listing, { target: 'draft-7', io: 'input' });
	const { registered } = tool;
	return {
		name,
		...(registered.title === undefined ? {} : { title: registered.title }),
		...(registered.description === undefined ? {} : { description: registered.description }),
		inputSchema: inputSchema as Tool['inputSchema'],
		...(registered.annotations === undefined ? {} : { annotations: registered.annotations }),
	};
}

/** Call after every tool is registered: the SDK installs its own tools/list handler on the first one. */
export function useCompactToolListing(server: McpServer, tools: ReadonlyMap<string, ListedTool>): void {
	server.server.setRequestHandler(ListToolsRequestSchema, () => ({
		tools: [...tools].filter(([, tool]) => tool.registered.enabled).map(([name, tool]) => listingOf(name, tool)),
	}));
}
