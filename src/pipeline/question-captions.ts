import type { ChatModel } from '../providers/model-spec.ts';
import type { QuestionImage } from '../types/question.ts';
import type { ModelCallRecord } from './retrieval-result.ts';

const CAPTION_PROMPT =
  'Describe this image faithfully and densely: visible text (OCR), people, objects, attributes, spatial relations and actions. Do not infer anything that is not visible. Return only the description.';

/**
 * Captions of the question's own images: the dataset/caller caption when given, else one from the vision
 * model (its cache wrapper makes repeats free), else nothing. A failed caption is reported, never thrown.
 */
export async function questionImageCaptions(
  images: readonly QuestionImage[],
  vision: ChatModel | undefined,
  signal?: AbortSignal,
): Promise<{ captions: string[]; calls: ModelCallRecord[]; failed: boolean }> {
  const captions: string[] = [];
  const calls: ModelCallRecord[] = [];
  let failed = false;
  for (const image of images) {
    if (image.caption !== undefined && image.caption.trim() !== '') {
      captions.push(image.caption.trim());
      continue;
    }
    if (image.uri === undefined || vision === undefined) continue;
    const started = performance.now();
    try {
      const response = await vision.chat({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'image', uri: image.uri },
              { type: 'text', text: CAPTION_PROMPT },
            ],
          },
        ],
        temperature: 0,
        maxTokens: 512,
        ...(signal === undefined ? {} : { signal }),
      });
      if (response.text.trim() !== '') captions.push(response.text.trim());
      calls.push({
        stage: 'caption',
        model: vision.modelId,
        attempts: 1,
        ok: true,
        cached: response.cached,
        latencyMs: response.latencyMs,
        usage: response.usage,
      });
    } catch (error) {
      failed = true;
      calls.push({
        stage: 'caption',
        model: vision.modelId,
        attempts: 1,
        ok: false,
        cached: false,
        latencyMs: performance.now() - started,
        usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }
  return { captions, calls, failed };
}
