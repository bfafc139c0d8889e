<?php

use PHPUnit\Framework\TestCase;

require_once __DIR__ . '/../src/Arith.php';

final class ArithTest extends TestCase
{
    public function testAddsZeros(): void
    {
        $this->assertSame(0, Arith::add(0, 0));
    }
}
