import { Body, Controller, Get, Module, Post } from '@nestjs/common';
import { z } from 'zod';
import { ZodPipe } from '@app/http';

const echoBody = z.object({ name: z.string().min(1), count: z.number().int().positive() }).strict();

/** Routes that exist only in tests, to exercise the shell's error handling and shutdown. */
@Controller('__probe')
class ProbeController {
  @Post('echo')
  echo(@Body(new ZodPipe(echoBody)) body: z.infer<typeof echoBody>) {
    return { ok: true, body };
  }

  @Get('boom')
  boom() {
    throw new Error('secret internal detail: password=hunter2');
  }

  @Get('slow')
  async slow() {
    await new Promise((r) => setTimeout(r, 700));
    return { ok: true, slow: true };
  }
}

@Module({ controllers: [ProbeController] })
export class ProbeModule {}
