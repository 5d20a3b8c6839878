import { z } from '../schema';

/** Response schema of portal links (beyond the API specification). */
export const PortalSession = z
  .strictObject({
    object: z.literal('PortalSession'),
    url: z.string().openapi({ description: 'Opens the webhook portal for the key\'s user and mode; no key needed.', example: 'https://api.example.com/portal/login/3q2-…' }),
    expires_at: z.string().openapi({ format: 'date-time' }),
  })
  .openapi('PortalSession');
