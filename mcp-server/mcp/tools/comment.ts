/** `comment`: post a message on a card (a question asks a human). */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';

import { CommentParams } from '../../../core/protocol';
import type { ToolContext } from '../context';
import { leanObject } from '../leanSchema';
import { type ListedTool, registerListedTool, updatingTool } from '../toolListing';
import { toolHandler } from '../toolResult';

export function registerCommentTool(server: McpServer, ctx: ToolContext): ListedTool {
	return registerListedTool(
		server,
		'comment',
		{
			title: 'Comment',
			description: 'Post a message on a card; question asks a human. Returns {message}.',
			listing: leanObject(CommentParams, { cardId: 'Id', text: 'Markdown ≤ 4 KiB', question: 'Ask a human' }),
			annotations: updatingTool,
		},
		toolHandler('comment', CommentParams, async args => {
			const { message } = await ctx.request('card/comment', args);
			return { message: { id: message.id, from: message.from, at: message.at } };
		}),
	);
}
