import type { ChatModel } from '../providers/model-spec.ts';
import type { QuestionImage } from '../types/question.ts';
import { answeredCall, failedCall } from './model-call-record.ts';
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
      calls.push(answeredCall('caption', vision.modelId, response));
    } catch (error) {
      failed = true;
      calls.push(failedCall('caption', vision.modelId, started, error));
    }
  }
  return { captions, calls, failed };
}
