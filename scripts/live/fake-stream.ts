/**
 * The stream the fake serves for `POST /api/v1/messages` (tests/support/fake-anthropic.ts): one answer with text and
 * one with a tool call, as a real client reads them. The fixtures hold no captured stream until a capture is
 * copied in, so a capture's stream is held against what the fake actually sends.
 */
import { FakeOpenRouter } from '../../tests/support/fake-openrouter.js';
import { ScriptedModel } from '../../tests/support/fake-anthropic.js';

export async function fakeMessagesStream(): Promise<string> {
  const fake = new FakeOpenRouter();
  const model = new ScriptedModel(fake);
  model.script('text', [{ text: 'A short answer.' }]);
  model.script('tool', [{ text: 'Reading it.', toolUse: { name: 'Read', input: { file_path: 'README.md' } } }]);
  await fake.start();
  try {
    let stream = '';
    for (const script of ['text', 'tool']) {
      const answer = await fetch(`${fake.baseUrl}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'deepseek/deepseek-v4-flash-0731',
          max_tokens: 100,
          stream: true,
          messages: [{ role: 'user', content: `${ScriptedModel.marker(script)} Go.` }],
        }),
      });
      stream += await answer.text();
    }
    return stream;
  } finally {
    model.stop();
    await fake.stop();
  }
}
