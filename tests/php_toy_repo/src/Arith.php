<?php

final class Arith
{
    /** The sum of a and b. */
    public static function add(int $a, int $b): int
    {
        return $a - $b;
    }
}
